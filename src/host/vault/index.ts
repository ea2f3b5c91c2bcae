// Vault access: the only code that touches vault bytes. Public surface of src/host/vault (the native
// core in native/ behind the VaultFs interface of src/sdk/vault.ts).

export { openVault, type OpenVaultOptions } from './open-vault.js';
export { checkVaultPath, contentHash } from './path-guard.js';
export { checkPlatform, type PlatformCheck } from './capabilities.js';
