// Public surface of the SSH layer.
export { connectSsh, DEFAULT_EXEC_TIMEOUT_MS, DEFAULT_READY_TIMEOUT_MS } from './connect';
export type { ExecOptions, ExecResult, SshConnection, SshTarget } from './connect';
export { verifyHostKey, normalizeFingerprint, ACCEPT_NEW_HINT_FLAG } from './hostKey';
export type { HostKeyVerdict, VerifyHostKeyInput } from './hostKey';
export {
  appendKnownHost,
  formatKnownHostsLine,
  hostKeyFingerprint,
  lookupHostKeys,
  parseKnownHosts,
} from './knownHosts';
export type { KnownHostEntry, KnownHostMarker } from './knownHosts';
export { shellQuote, shellQuoteArg } from './quote';
export { openTunnel } from './tunnel';
export type { Tunnel, TunnelMode, TunnelOptions } from './tunnel';
