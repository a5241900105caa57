// Debian's real prometheus-node-exporter and Prometheus for the suites that check what a site's
// Prometheus sees: node_exporters serving textfile dirs, one Prometheus scraping them every second
// and evaluating deploy/alerts.yml with every `for:` at 0s (the real durations are tested on
// promtool's simulated clock in test/prometheus/alerts.test.yml). Every process started is killed
// by stop(), or at the worker's exit.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { expect } from 'vitest';
import { repoRoot } from './support';

/** Prometheus answers within this long once it has what it needs; a hang guard, not a speed check. */
const PATIENCE_MS = 120_000;

export interface VectorSample {
  metric: Record<string, string>;
  value: [number, string];
}
export interface Alert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  state: 'pending' | 'firing';
  activeAt: string;
  value: string;
}

/** A free loopback port (the kernel's pick, released for the binary to take). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => (a && typeof a === 'object' ? resolve(a.port) : reject(new Error('no port'))));
    });
  });
}

/** Polls `probe` until it returns a value (not undefined); fails naming `what` and the processes' output. */
async function until<T>(what: string, probe: () => Promise<T | undefined>, logs: () => string): Promise<T> {
  const deadline = Date.now() + PATIENCE_MS;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
      last = 'none (answered, not yet as wanted)';
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`waited ${PATIENCE_MS / 1000}s for ${what}; last error: ${String(last)}\n${logs()}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** The running binaries of one suite. */
export class RealPrometheus {
  private readonly children: { name: string; proc: ChildProcess; output: () => string }[] = [];
  private url = '';

  constructor(private readonly work: string) {
    // A crashed worker must not leave them running either.
    process.once('exit', () => this.children.forEach((c) => c.proc.exitCode === null && c.proc.kill('SIGKILL')));
  }

  /** Starts a Debian binary; its output is kept to explain a failure. */
  private start(name: string, bin: string, args: string[]): void {
    const proc = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    proc.stdout!.on('data', (d) => (out = (out + d).slice(-20_000)));
    proc.stderr!.on('data', (d) => (out = (out + d).slice(-20_000)));
    this.children.push({ name, proc, output: () => out });
  }

  /** The output of every process, for a failure's message. */
  logs = (): string => this.children.map((c) => `--- ${c.name}:\n${c.output()}`).join('\n');

  /** node_exporter with its textfile collector only (its others would read this machine); its `instance`. */
  async nodeExporter(textfileDir: string): Promise<string> {
    const instance = `127.0.0.1:${await freePort()}`;
    this.start(`node_exporter ${instance}`, 'prometheus-node-exporter', [`--web.listen-address=${instance}`, '--collector.disable-defaults', '--collector.textfile', `--collector.textfile.directory=${textfileDir}`]);
    return instance;
  }

  /**
   * Prometheus scraping `targets` (job `node`) every second and evaluating deploy/alerts.yml with
   * every `for:` at 0s, so an alert fires at the first evaluation that sees its condition. Only
   * the durations change: every expression, label and annotation is the file's own.
   */
  async prometheus(targets: string[]): Promise<void> {
    const shipped = readFileSync(path.join(repoRoot, 'deploy', 'alerts.yml'), 'utf8');
    const forLines = /^(\s+)for: \S+$/gm;
    expect(shipped.match(forLines)?.length).toBe(shipped.match(/^\s+- alert: /gm)?.length);
    writeFileSync(path.join(this.work, 'alerts.yml'), shipped.replace(forLines, '$1for: 0s'));
    const config = ['global:', '  scrape_interval: 1s', '  evaluation_interval: 1s', 'rule_files: [alerts.yml]', 'scrape_configs:', '  - job_name: node', '    static_configs:', `      - targets: [${targets.map((t) => `'${t}'`).join(', ')}]`, ''];
    writeFileSync(path.join(this.work, 'prometheus.yml'), config.join('\n'));
    execFileSync('promtool', ['check', 'config', path.join(this.work, 'prometheus.yml')], { stdio: 'pipe' });
    const port = await freePort();
    this.url = `http://127.0.0.1:${port}`;
    this.start('prometheus', 'prometheus', [`--config.file=${path.join(this.work, 'prometheus.yml')}`, `--storage.tsdb.path=${path.join(this.work, 'tsdb')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn']);
    await this.until('Prometheus ready', async () => ((await fetch(`${this.url}/-/ready`)).ok ? true : undefined));
  }

  private async api<T>(pathAndQuery: string): Promise<T> {
    const r = await fetch(`${this.url}${pathAndQuery}`);
    const body = (await r.json()) as { status: string; data: T; error?: string };
    if (body.status !== 'success') throw new Error(`${pathAndQuery}: ${body.error}`);
    return body.data;
  }

  query = async (promql: string): Promise<VectorSample[]> => (await this.api<{ resultType: string; result: VectorSample[] }>(`/api/v1/query?query=${encodeURIComponent(promql)}`)).result;

  alerts = async (): Promise<Alert[]> => (await this.api<{ alerts: Alert[] }>('/api/v1/alerts')).alerts;

  /** Polls `probe` until it returns a value; fails naming `what`, with the processes' output. */
  until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
    return until(what, probe, this.logs);
  }

  async stop(): Promise<void> {
    await Promise.all(
      this.children.map(
        ({ proc: c }) =>
          new Promise<void>((resolve) => {
            if (c.exitCode !== null || c.signalCode !== null) return resolve();
            const kill = setTimeout(() => c.kill('SIGKILL'), 10_000);
            c.once('exit', () => (clearTimeout(kill), resolve()));
            c.kill('SIGTERM');
          }),
      ),
    );
  }
}
