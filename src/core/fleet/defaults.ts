// How many nodes `inspect` takes at once and how long each may take. On their own so the CLI can
// show them in its help without loading what inspects.
export const DEFAULT_FLEET_CONCURRENCY = 16;
export const DEFAULT_NODE_TIMEOUT_MS = 30_000;
