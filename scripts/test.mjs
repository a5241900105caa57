#!/usr/bin/env node
// `npm test`: every test, in the order that fails fastest — lint (oxlint, .oxlintrc.json), the
// typecheck (each tsconfig.*.json program: Node, web, preload, DOM tests), unit, the builds
// (renderer and CLI bundle), integration over the lab (real containerd + OpenSSH per node, on containerd 2.x,
// then 1.7 and 1.6 for the suites that depend on the line, then the pin, fate, import and inspect
// suites again on RKE2-shaped nodes; needs root, the packages .ci/run
// installs and scripts/lab-containerd.sh) running the CLI from that bundle, then the end-to-end
// suite in Chromium against that renderer build. Ends with one summary line.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';

const root = path.resolve(import.meta.dirname, '..');
const reports = path.join(root, 'test-results', 'summary');
rmSync(reports, { recursive: true, force: true });
mkdirSync(reports, { recursive: true });

function run(label, cmd, args, env = {}) {
  console.log(`\n=== ${label}: ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', env: { ...process.env, ...env } });
  return r.status ?? 1;
}

function preflight() {
  const problems = [];
  if (process.getuid && process.getuid() !== 0) problems.push('integration tests run lab nodes (containerd, sshd, mount namespaces) and need root');
  for (const bin of ['/usr/bin/containerd', '/usr/bin/ctr', '/usr/sbin/sshd', '/usr/bin/ssh-keygen', '/usr/bin/unshare', '/usr/bin/chromium']) {
    if (!existsSync(bin)) problems.push(`${bin} is missing (apt-get install containerd openssh-server chromium — see .ci/run)`);
  }
  const cache = process.env.HOLDFAST_CONTAINERD_CACHE ?? '/var/cache/holdfast-lab/containerd';
  for (const line of ['1.7', '2']) {
    if (!existsSync(path.join(cache, line, 'containerd'))) problems.push(`containerd ${line} for the lab is missing (run: bash scripts/lab-containerd.sh ${line})`);
  }
  const signing = process.env.HOLDFAST_SIGNING_CACHE ?? '/var/cache/holdfast-lab/signing';
  for (const tool of ['cosign', 'oras']) {
    if (!existsSync(path.join(signing, tool, tool))) problems.push(`${tool} for the signature tests is missing (run: bash scripts/lab-signing-tools.sh)`);
  }
  if (!existsSync('/usr/bin/docker-registry')) problems.push('/usr/bin/docker-registry is missing (apt-get install docker-registry — see .ci/run)');
  return problems;
}

const counts = { passed: 0, failed: 0 };
// The tests that did not pass, named again at the very end: CI keeps only the tail of a long
// log, and a count without a name cannot be acted on.
const notPassed = [];
// Vitest's JSON report keeps only the stack of a test that timed out, and that stack starts
// "Error: STACK_TRACE_ERROR": say what it means.
const firstLine = (text) => {
  const line = stripVTControlCharacters(String(text ?? '')).split('\n').find((l) => l.trim())?.trim().slice(0, 300) ?? '';
  return line === 'Error: STACK_TRACE_ERROR' ? 'timed out (its timeout, or a hang)' : line;
};
function addVitest(file, step) {
  if (!existsSync(file)) return false;
  const j = JSON.parse(readFileSync(file, 'utf8'));
  counts.passed += j.numPassedTests ?? 0;
  counts.failed += (j.numFailedTests ?? 0) + (j.numPendingTests ?? 0) + (j.numTodoTests ?? 0);
  for (const f of j.testResults ?? []) {
    const rel = path.relative(root, f.name ?? '');
    for (const t of f.assertionResults ?? []) {
      if (t.status !== 'passed') notPassed.push(`${step}: ${rel} › ${t.fullName ?? t.title} [${t.status}] ${firstLine(t.failureMessages?.[0])}`);
    }
    // A file that failed to load or whose hook threw has no failed assertion to name.
    if (f.status === 'failed' && !(f.assertionResults ?? []).some((t) => t.status !== 'passed')) notPassed.push(`${step}: ${rel} [file failed] ${firstLine(f.message)}`);
  }
  return true;
}
function addPlaywright(file) {
  if (!existsSync(file)) return false;
  const j = JSON.parse(readFileSync(file, 'utf8'));
  const s = j.stats ?? {};
  counts.passed += (s.expected ?? 0) + (s.flaky ?? 0);
  counts.failed += (s.unexpected ?? 0) + (s.skipped ?? 0);
  const walk = (suite, titles) => {
    for (const spec of suite.specs ?? []) {
      for (const t of spec.tests ?? []) {
        if (t.status === 'expected' || t.status === 'flaky') continue;
        const err = t.results?.at(-1)?.error?.message;
        notPassed.push(`e2e: ${spec.file}:${spec.line} › ${[...titles, spec.title].join(' › ')} [${t.status}] ${firstLine(err)}`);
      }
    }
    for (const child of suite.suites ?? []) walk(child, suite.title && !suite.file ? [...titles, suite.title] : titles);
  };
  for (const suite of j.suites ?? []) walk(suite, []);
  return true;
}

const failedSteps = [];
const vitestArgs = (project, out) => ['vitest', 'run', '--project', project, '--reporter=default', '--reporter=json', `--outputFile.json=${out}`];

// A failed step fails the run and is named in the summary; the counts stay the tests'.
if (run('lint', 'npm', ['run', '--silent', 'lint']) !== 0) failedSteps.push('lint');
if (run('typecheck', 'npm', ['run', '--silent', 'typecheck']) !== 0) failedSteps.push('typecheck');

const unitOut = path.join(reports, 'unit.json');
if (run('unit', 'npx', vitestArgs('unit', unitOut)) !== 0) failedSteps.push('unit');
if (!addVitest(unitOut, 'unit')) failedSteps.push('unit (no report)');

const problems = preflight();
if (problems.length) {
  console.error(`\nCannot run the integration and end-to-end tests here:\n- ${problems.join('\n- ')}`);
  failedSteps.push('preflight');
} else if (run('build', 'npx', ['electron-vite', 'build']) !== 0 || run('build:cli', process.execPath, ['scripts/build-cli.mjs']) !== 0) {
  failedSteps.push('build');
} else {
  // containerd 2.x (every integration suite), then the version-dependent suites on 1.7 and 1.6,
  // then the distro-dependent ones on RKE2-shaped nodes (vitest.config.ts RKE2_SUITES).
  // The CLI they spawn is the bundle just built: HOLDFAST_CLI=bundle, so it is not silently
  // swapped for the sources when one changes meanwhile (bin/entry.mjs).
  for (const project of ['integration', 'integration-1.7', 'integration-1.6', 'integration-rke2']) {
    const out = path.join(reports, `${project}.json`);
    if (run(project, 'npx', vitestArgs(project, out), { HOLDFAST_CLI: 'bundle' }) !== 0) failedSteps.push(project);
    if (!addVitest(out, project)) failedSteps.push(`${project} (no report)`);
  }

  const e2eOut = path.join(reports, 'e2e.json');
  if (run('e2e', 'npx', ['playwright', 'test', '--reporter=list,json'], { PLAYWRIGHT_JSON_OUTPUT_FILE: e2eOut }) !== 0) failedSteps.push('e2e');
  if (!addPlaywright(e2eOut)) failedSteps.push('e2e (no report)');
}

if (notPassed.length) console.log(`\nnot passed:\n- ${notPassed.join('\n- ')}`);
console.log(`\n${failedSteps.length ? `failed steps: ${failedSteps.join(', ')}` : 'all steps passed'}`);
console.log(`${counts.passed} passed, ${counts.failed} failed`);
process.exit(failedSteps.length || counts.failed ? 1 : 0);
