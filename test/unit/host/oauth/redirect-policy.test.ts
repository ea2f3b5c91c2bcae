// The authorization server's redirect and metadata-URL rules (pure), the https requirement on
// server.publicUrl, scope mapping and the Bearer challenges.
import t from 'tap';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadSettings, SettingsError } from '../../../../src/host/settings/load.js';
import { bearerChallenge, resourceMetadata, scopesOf } from '../../../../src/host/oauth/access-tokens.js';
import { endpointsFor } from '../../../../src/host/oauth/provider.js';
import { clientMetadataUrlProblem, redirectUriProblem } from '../../../../src/host/oauth/redirect-policy.js';

const open = { allowedRedirectHosts: [], allowedClientMetadataHosts: [] };

t.test('the redirect URIs claude.ai and ChatGPT use are accepted out of the box', async (t) => {
  for (const uri of [
    'https://claude.ai/api/mcp/auth_callback',
    'https://claude.com/api/mcp/auth_callback',
    'https://chatgpt.com/connector/oauth/abc123',
    'https://chatgpt.com/connector_platform_oauth_redirect',
  ]) {
    t.equal(redirectUriProblem(uri, open), undefined, uri);
    t.equal(
      redirectUriProblem(uri, { ...open, allowedRedirectHosts: ['claude.ai', 'claude.com', 'chatgpt.com'] }),
      undefined,
      `${uri} with the hosts listed`,
    );
  }
});

t.test("https only, loopback http on any port, the operator's host list", async (t) => {
  t.equal(redirectUriProblem('http://127.0.0.1:61234/callback', open), undefined);
  t.equal(redirectUriProblem('http://[::1]:8080/cb', open), undefined);
  t.match(redirectUriProblem('http://connector.example.org/cb', open), /only to loopback/);
  t.match(redirectUriProblem('com.example.app:/oauth', open), /scheme com\.example\.app is not allowed/);
  t.match(redirectUriProblem('javascript:alert(1)', open), /scheme javascript/);
  t.match(redirectUriProblem('https://claude.ai/cb#frag', open), /fragment/);
  t.match(redirectUriProblem('https://user:pw@claude.ai/cb', open), /credentials/);
  for (const uri of ['http://0.0.0.0/cb', 'https://0.0.0.0/cb', 'https://[::]/cb', 'https://0/cb'])
    t.match(redirectUriProblem(uri, open), /unspecified address/, uri);
  t.match(redirectUriProblem('https://255.255.255.255/cb', open), /broadcast/);
  t.match(redirectUriProblem('https://224.0.0.1/cb', open), /multicast/);
  t.match(
    redirectUriProblem('https://evil.example.net/cb', { ...open, allowedRedirectHosts: ['claude.ai'] }),
    /oauth\.allowedRedirectHosts/,
  );
  t.equal(
    redirectUriProblem('http://127.0.0.1:5000/cb', { ...open, allowedRedirectHosts: ['claude.ai'] }),
    undefined,
    'loopback stays allowed',
  );
  t.match(clientMetadataUrlProblem('http://clients.example.com/c.json', open), /https/);
  t.match(
    clientMetadataUrlProblem('https://clients.example.com/c.json', {
      ...open,
      allowedClientMetadataHosts: ['claude.ai'],
    }),
    /allowedClientMetadataHosts/,
  );
  t.equal(
    clientMetadataUrlProblem('https://claude.ai/oauth/client.json', {
      ...open,
      allowedClientMetadataHosts: ['claude.ai'],
    }),
    undefined,
  );
});

t.test('server.publicUrl must be https (loopback excepted) while oauth is enabled', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'exo-oauth-settings-'));
  const load = (yaml: string) => {
    const file = path.join(dir, `${Math.random()}.yaml`);
    writeFileSync(file, yaml);
    try {
      loadSettings({ file, env: {} });
      return [];
    } catch (e) {
      if (e instanceof SettingsError) return [...e.problems];
      throw e;
    }
  };
  t.match(load('server:\n  publicUrl: http://vault.example.org\n'), [/server\.publicUrl.*https.*oauth\.enabled/]);
  t.same(load('server:\n  publicUrl: http://vault.example.org\noauth:\n  enabled: false\n'), []);
  t.same(load('server:\n  publicUrl: https://vault.example.org\n'), []);
  t.same(load('server:\n  publicUrl: http://127.0.0.1:3737\n'), []);
  t.match(load('server:\n  publicUrl: https://example.org/exocortex\n'), [/without a path/]);
});

t.test('scopes map onto key scopes; challenges name the resource metadata', async (t) => {
  t.same(scopesOf('vault:read'), ['read']);
  t.same(scopesOf('vault:read vault:write'), ['read', 'readwrite']);
  t.same(scopesOf('openid'), []);
  const e = endpointsFor('https://vault.example.org/');
  t.same(e, { issuer: 'https://vault.example.org', resource: 'https://vault.example.org/mcp' });
  t.equal(
    bearerChallenge(e, '/mcp'),
    'Bearer resource_metadata="https://vault.example.org/.well-known/oauth-protected-resource/mcp", scope="vault:read vault:write"',
  );
  t.equal(
    bearerChallenge(e, '/'),
    'Bearer resource_metadata="https://vault.example.org/.well-known/oauth-protected-resource", scope="vault:read vault:write"',
  );
  t.match(
    bearerChallenge(e, '/mcp', {
      error: 'insufficient_scope',
      scope: 'vault:read vault:write',
      description: 'needs "write"',
    }),
    /^Bearer error="insufficient_scope", .*error_description="needs write"$/,
  );
  t.equal(resourceMetadata(e, '/mcp').resource, 'https://vault.example.org/mcp');
  t.same(resourceMetadata(e, '').authorization_servers, ['https://vault.example.org']);
});
