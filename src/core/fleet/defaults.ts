// How many nodes `inspect` takes at once and how long each may take. On their own so the CLI can
// show them in its help without loading what inspects.
//
// A node's inspection is nearly all waiting on its network (≈ 25 round trips: SSH, the probe, the
// image list, SFTP) and costs the laptop ≈ 30–60 ms of CPU and a few MiB: at 16 at once, 50 nodes
// behind a 200 ms RTT took four waves of the slowest node's time (bench/fleet.ts). 64 takes a
// typical site in one wave; --concurrency still bounds it for a laptop on a thin link.
export const DEFAULT_FLEET_CONCURRENCY = 64;
export const DEFAULT_NODE_TIMEOUT_MS = 30_000;
