// How many nodes `inspect` takes at once and how long each may take. On their own so the CLI can
// show them in its help without loading what inspects.
//
// 64 at once: a node's inspection is nearly all network wait, so a 50-node site behind 200 ms
// RTT finishes in about the slowest node's time instead of four waves of it at 16. What would
// hurt is many set-ups through one bastion (its sshd's MaxStartups): those are bounded apart, per
// first hop (connectGate.ts), and a node's deadline starts only when its connection does.
export const DEFAULT_FLEET_CONCURRENCY = 64;
export const DEFAULT_NODE_TIMEOUT_MS = 30_000;
