// holdfast metrics — this node's pin state as Prometheus series, for node_exporter's textfile
// collector: run on the node (--local, as root) from a systemd timer or a DaemonSet, alert in the
// site's own Prometheus. The values are the fleet inspection's (the same rules as `inspect`) and
// the disk picture's; shared/metrics.ts prints them.
import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { writeFileAtomic } from '../../core/config/atomic';
import { HoldfastError, toErrorInfo } from '../../core/errors';
import { renderMetrics } from '../../shared/metrics';
import type { Cli } from '../context';
import { runFleet } from '../fleetRun';
import { helpAfter } from '../help';
import { localNodeOf, withLocalOptions } from '../localNode';
import { positiveSeconds } from '../options';
import { terminalSafe as safe } from '../format';

export function registerMetricsCommand(program: Command, cli: Cli): void {
  const cmd = program
    .command('metrics')
    .summary("this node's pins as Prometheus series (node_exporter textfile)")
    .description(
      "This node's images by pin, the pins lost at the next k3s start, needed images at risk, lost durable pins, archives, the image file system against kubelet's GC threshold, and whether the check worked: Prometheus text format, for node_exporter's textfile collector.",
    )
    .option('--textfile <file>', 'write the series to this file (atomically: a temp file in its dir, then renamed), not stdout')
    .option('--timeout <seconds>', 'to read containerd and the images dir', positiveSeconds, 60);
  withLocalOptions(cmd)
    .addHelpText(
      'after',
      helpAfter(
        [
          '# On the node, as root',
          'holdfast metrics --local',
          'holdfast metrics --local \\',
          '  --textfile /var/lib/prometheus/node-exporter/holdfast.prom',
          '# Another containerd or images dir than the distro\'s',
          'holdfast metrics --local --socket /run/containerd/containerd.sock \\',
          '  --images-dir /srv/airgap/images',
          '# From a laptop, every node with a node label',
          'holdfast inspect --all --openmetrics fleet.prom',
        ],
        [
          'A failed check still writes the file (holdfast_check_success 0, its kind as a label) and exits non-zero.',
          'deploy/ has a systemd service and timer, a DaemonSet and example alert rules.',
        ],
      ),
    )
    .action(async (o) => {
      const node = await localNodeOf(cli, o);
      if (!node) {
        throw new HoldfastError('INVALID_INPUT', 'metrics reads the node it runs on: add --local', { hint: 'From a laptop, `holdfast inspect --openmetrics FILE` writes the same series for every node.' });
      }
      // The textfile collector's dir exists (its package made it, readable by node_exporter): a
      // dir made here would be root's alone, and a typo would write where nothing reads.
      const textfile = o.textfile ? path.resolve(o.textfile as string) : null;
      if (textfile && !(await stat(path.dirname(textfile)).catch(() => null))?.isDirectory()) {
        throw new HoldfastError('INVALID_INPUT', `no directory ${safe(path.dirname(textfile))} for --textfile`, {
          hint: "Point --textfile into node_exporter's --collector.textfile.directory (e.g. /var/lib/prometheus/node-exporter).",
        });
      }
      // The image file system and kubelet's GC threshold come from the disk picture without its
      // images, measured on the inspection's own connection (fleet.start diskPicture).
      const { report } = await runFleet(cli, { nodes: [node], timeout: o.timeout, diskPicture: true }, { progress: false });
      const result = report.nodes[0]!;
      const disk = result.diskPicture ?? null;
      const text = renderMetrics([{ label: null, result, disk }], Math.floor(Date.now() / 1000));
      if (textfile) await writeFileAtomic(textfile, text, 0o644);
      else cli.io.out(text.trimEnd());
      if (!result.reachable) {
        const e = result.error ?? toErrorInfo(new Error('unknown error'));
        throw new HoldfastError(e.code, `${e.message}${o.textfile ? ` (written to ${safe(o.textfile)} as holdfast_check_success 0)` : ''}`, {
          ...(e.hint ? { hint: e.hint } : {}),
          ...(e.remedy ? { remedy: e.remedy } : {}),
        });
      }
    });
}
