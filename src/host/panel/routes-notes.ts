import type { FastifyInstance } from 'fastify';
import type { PanelContext } from './server.js';

export function registerNotes(_panel: FastifyInstance, _ctx: PanelContext): void {}
