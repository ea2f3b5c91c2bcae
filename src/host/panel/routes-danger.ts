import type { FastifyInstance } from 'fastify';
import type { PanelContext } from './server.js';

export function registerDanger(_panel: FastifyInstance, _ctx: PanelContext): void {}
