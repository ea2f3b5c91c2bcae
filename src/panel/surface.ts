// The operator panel as an HTTP surface of the host: `exocortex serve` (and the test harness) pass it to
// Host.start, and the host mounts it at /admin when panel.enabled. Its pages load only then, so a host
// without the panel pays nothing for them.
import type { HttpSurface } from '../host/http/surfaces.js';

export const panelSurface: HttpSurface = {
  name: 'panel',
  enabled: (settings) => settings.host.panel.enabled,
  async register(app, deps) {
    const { registerPanel } = await import('./server.js');
    await registerPanel(app, deps);
  },
};
