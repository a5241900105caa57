// How many nodes `inspect` takes at once and how long each may take. On their own so the CLI can
// show them in its help without loading what inspects.
//
// 16 at once: a node's inspection is nearly all network wait, so a 50-node site behind 200 ms RTT
// takes about four waves of the slowest node's time. 64 was tried (bench/fleet.ts) and left out:
// the per-node deadline runs while a node waits for CPU, so when what serves the nodes is
// saturated (the lab's nodes on two shared cores), 64 at once had 47 of 50 nodes miss their 30 s
// where 16 at once answered all 50. Raise it only with a deadline that does not count that wait.
export const DEFAULT_FLEET_CONCURRENCY = 16;
export const DEFAULT_NODE_TIMEOUT_MS = 30_000;
