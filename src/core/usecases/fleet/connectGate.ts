// How many SSH connections a fleet run sets up at once through the same first hop (a node's own
// address, or the jump host every node behind it is reached through). OpenSSH's sshd drops new
// unauthenticated connections at random once MaxStartups' first number (default 10) are pending,
// so a site of 50 nodes behind one bastion, all connecting at once, would see random resets;
// below that number it never does. Once a session is open its slot goes to the next node.
// Hand-written: a keyed counting semaphore with an abortable wait is a few lines, and the
// semaphore libraries on npm are neither keyed nor abortable.
/** Connection set-ups in flight per first hop: under sshd's MaxStartups default of 10. */
export const CONNECTS_PER_FIRST_HOP = 8;

export class ConnectGate {
  private readonly inFlight = new Map<string, number>();
  private readonly waiting = new Map<string, Array<() => void>>();

  constructor(private readonly perKey: number) {}

  /** Resolves with a release function once a slot for `key` is free; rejects if `signal` aborts first. */
  acquire(key: string, signal?: AbortSignal): Promise<() => void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const grant = () => {
        signal?.removeEventListener('abort', onAbort);
        this.inFlight.set(key, (this.inFlight.get(key) ?? 0) + 1);
        let released = false;
        resolve(() => {
          if (released) return;
          released = true;
          this.release(key);
        });
      };
      const onAbort = () => {
        const q = this.waiting.get(key);
        const i = q?.indexOf(grant) ?? -1;
        if (q && i >= 0) q.splice(i, 1);
        reject(signal!.reason);
      };
      if ((this.inFlight.get(key) ?? 0) < this.perKey) return grant();
      signal?.addEventListener('abort', onAbort, { once: true });
      const q = this.waiting.get(key) ?? [];
      q.push(grant);
      this.waiting.set(key, q);
    });
  }

  private release(key: string): void {
    const n = (this.inFlight.get(key) ?? 1) - 1;
    if (n > 0) this.inFlight.set(key, n);
    else this.inFlight.delete(key);
    const q = this.waiting.get(key);
    const next = q?.shift();
    if (q && q.length === 0) this.waiting.delete(key);
    next?.();
  }
}
