// The exocortex command line's entry. A plain `exocortex stdio [--config FILE]` beside a running server
// goes straight to the relay (stdio-relay.ts) and loads nothing else: a desktop client starts it on every
// launch, and the command parser, the settings schema and the commands' modules would be most of its
// start. Everything else, a stdio with no server to relay to, and any refusal on the way (read again and
// reported there) is program.ts's.

/** The config file of a plain `stdio [--config FILE]` (undefined: the default one), or null for anything else. */
function plainStdio(args: readonly string[]): { config?: string } | null {
  if (args[0] !== 'stdio') return null;
  if (args.length === 1) return {};
  if (args.length === 2 && args[1].startsWith('--config=') && args[1].length > 9) return { config: args[1].slice(9) };
  if (args.length === 3 && (args[1] === '--config' || args[1] === '-c')) return { config: args[2] };
  return null;
}

async function relayed(config: string | undefined): Promise<boolean> {
  try {
    const [{ loadRelaySettings }, { relayStdio }] = await Promise.all([
      import('../host/settings/relay.js'),
      import('./stdio-relay.js'),
    ]);
    const relay = loadRelaySettings({ file: config });
    return relay.socketPath !== undefined && (await relayStdio(relay.socketPath, relay.vaultPath));
  } catch {
    return false;
  }
}

const stdio = plainStdio(process.argv.slice(2));
if (!(stdio && (await relayed(stdio.config)))) await import('./program.js');
