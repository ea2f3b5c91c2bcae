import type { FastifyInstance } from 'fastify';
import type { PanelContext } from './server.js';

export function registerIndexPages(_panel: FastifyInstance, _ctx: PanelContext): void {}
