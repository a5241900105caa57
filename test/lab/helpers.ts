import { run } from '../../lab/exec.ts';
import type { Lab, LabNodeHandle } from '../../lab/index.ts';

/** `ssh` into a lab node with strict host key checking against the lab's known_hosts. */
export function sshArgv(lab: Lab, node: LabNodeHandle, command: string[], knownHosts = lab.knownHosts): string[] {
  return [
    'ssh',
    '-i', lab.clientKey,
    '-p', String(node.port),
    '-o', `UserKnownHostsFile=${knownHosts}`,
    '-o', 'StrictHostKeyChecking=yes',
    '-o', 'BatchMode=yes',
    '-o', 'IdentitiesOnly=yes',
    '-o', 'LogLevel=ERROR',
    `root@${node.host}`,
    '--',
    ...command,
  ];
}

export function ssh(lab: Lab, node: LabNodeHandle, command: string[], knownHosts?: string): Promise<string> {
  return run(sshArgv(lab, node, command, knownHosts), { timeoutMs: 20_000 });
}
