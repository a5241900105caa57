// What the site needs, judged against what protects it: the ONE rule that answers "will a pod at
// this site fail?" for the CLI (images, inspect, reports, prune), the server and the app.
// Labels say what is pinned, not what is needed (docs: k3s facts, "Which images a site needs"):
// kubelet's garbage collector deletes every unpinned image no running container uses, and at an
// air-gapped site nobody can pull such an image again. So each image on a node gets a verdict from
// need × protection (shared/protection); "at risk" means a needed image that is missing,
// unprotected now, or unprotected after the next k3s start. Pure; the details are on judgeNeeds.
import type { PinState } from './domain/pins';
import { maxAgeWhen, verifiesPreloaded, type GcPolicy, type VerificationPolicy } from './gcPolicy';
import type { ImageProtection } from './protection';
import { protectionKey, refsByImage } from './protection';
import { isImageIdRecord, splitReference } from './imageReference';
import type { Workload } from './workloads';
import type { KubeNodeUnmatched } from './kubeNode';
import { compareText } from './compareText';
import { AT_RISK_VERDICTS, isAtRisk, NEED_VERDICT_TEXT, type ImageNeed, type NeedBasis, type NeedVerdict, type RefNeed } from './needVerdict';

export { AT_RISK_VERDICTS, isAtRisk, NEED_VERDICT_TEXT, type ImageNeed, type NeedBasis, type NeedVerdict, type RefNeed };

/** Where a need comes from. cluster: the workloads kubectl lists; list: the operator's own file; sandbox: containerd's CRI config (every pod's pause image). */
export type NeedSourceKind = 'cluster' | 'list' | 'sandbox';

export interface NeedSource {
  kind: NeedSourceKind;
  /** Short: "kubectl on edge1", "needed-images/site-a.txt", "containerd's CRI config". */
  label: string;
}

/** One image the site needs on this node. */
export interface NodeNeededImage {
  /** As CRI resolves it: docker.io/library/nginx:latest, or repo@sha256:… for a pull by digest. */
  ref: string;
  /** Who needs it (empty for a list entry or the sandbox image). */
  workloads: Workload[];
  source: NeedSourceKind;
}

/** What one node's site needs, from every source Holdfast could read (core/needs). */
export interface NodeNeeds {
  sources: NeedSource[];
  images: NodeNeededImage[];
  /**
   * Set when neither a cluster nor an operator's list told what the site needs: why, in one
   * clause. Then an image's provenance (an air-gap archive) decides whether it is needed.
   */
  noSource?: string;
  /**
   * Set when a cluster answered but none of its Nodes is this node (by its name, its address or
   * the Node it is mapped to): the views offer the mapping (shared/kubeNode).
   */
  unmatched?: KubeNodeUnmatched;
  /** What went wrong reading a source, one clause each (the others still count). */
  notes: string[];
}

/** A needed image the node does not have. */
export interface MissingNeed {
  ref: string;
  workloads: Workload[];
  source: NeedSourceKind;
  because: string;
  /** Where a copy is: an archive in the images dir, or another node (filled by the caller). */
  heldBy: string[];
}

export interface NeedsJudgement {
  /** 'known': a cluster or a list says what is needed; 'provenance': neither did. */
  basis: 'known' | 'provenance';
  byImage: Map<string, ImageNeed>;
  missing: MissingNeed[];
  /** Images at risk (missing included). */
  atRisk: number;
  /** Set when kubelet re-verifies imported images that the site needs. */
  verification?: VerificationRemedy;
}

/** Whether the needs are known: a cluster or an operator's list answered (the sandbox alone is not). */
export const needsKnown = (needs: NodeNeeds | null): boolean => needs !== null && needs.noSource === undefined && needs.sources.some((s) => s.kind !== 'sandbox');

/** Fields of a reference the rule reads (an ImageRef satisfies it). */
export interface NeedsRef {
  name: string;
  digest: string;
  imageId: string | null;
  pin: PinState;
  archive: string | null;
}

/** "Deployment default/web", the way a person names a workload. */
export const workloadName = (w: Workload): string => `${w.kind} ${w.namespace ? `${w.namespace}/` : ''}${w.name}`;

/** "Deployment default/web (scaled to 0) and 2 more": a short list for a clause. */
export function workloadsText(list: readonly Workload[], max = 1): string {
  const shown = list.slice(0, max).map((w) => `${workloadName(w)}${w.why ? ` (${w.why})` : ''}`);
  return list.length > max ? `${shown.join(', ')} and ${list.length - max} more` : shown.join(', ');
}

/**
 * Which references on the node satisfy a needed reference: the same name, or — for a pull by
 * digest (`repo@sha256:…`) — a reference of the same repository whose target is that digest.
 */
export function satisfies(need: string, ref: Pick<NeedsRef, 'name' | 'digest'>): boolean {
  if (need === ref.name) return true;
  const at = need.indexOf('@');
  if (at < 0) return false;
  const digest = need.slice(at + 1);
  if (ref.digest !== digest) return false;
  return splitReference(ref.name)?.repository === need.slice(0, at);
}

/** The references of one image by which k3s (or Holdfast) shows it came from an air-gap archive. */
function provenance(refs: readonly NeedsRef[], auditPinned: ReadonlySet<string>, sourced: ReadonlySet<string>, who: string): string | null {
  const archive = refs.find((r) => r.archive);
  if (archive) return `${archive.archive} in the images dir brings it`;
  if (refs.some((r) => r.pin === 'distro')) return `${who} imported it from an air-gap archive`;
  const digestRef = refs.find((r) => !isImageIdRecord(r.name) && r.name.includes('@sha256:'));
  if (digestRef) return `${who}'s digest reference ${digestRef.name.replace(/@sha256:([0-9a-f]{12})[0-9a-f]+$/, '@sha256:$1…')} shows it came from an air-gap archive`;
  if (refs.some((r) => sourced.has(r.digest))) return `its content carries ${who}'s containerd.io/distribution.source labels from an air-gap import`;
  const pinned = refs.find((r) => auditPinned.has(r.name));
  if (pinned) return `Holdfast pinned ${pinned.name} (audit log)`;
  return null;
}

const SOURCE_BASIS: Record<NeedSourceKind, NeedBasis> = { cluster: 'workload', list: 'list', sandbox: 'sandbox' };

function neededBecause(basis: NeedBasis, workloads: readonly Workload[], list: string | null): string {
  if (basis === 'workload') return `needed by ${workloadsText(workloads)}`;
  if (basis === 'list') return `on the operator's list${list ? ` (${list})` : ''}`;
  if (basis === 'sandbox') return "every pod's sandbox (pause) image";
  return 'needed';
}

function verdictOf(p: Pick<ImageProtection, 'now' | 'afterRestart'> | undefined, needed: boolean): NeedVerdict {
  if (!p) return needed ? 'missing' : 'unneeded';
  if (needed) return !p.now ? 'unprotected' : !p.afterRestart ? 'losing' : 'protected';
  return p.now || p.afterRestart ? 'reclaimable' : 'unneeded';
}

/** The verdict's clause; `who` names the node's distro ("k3s", "RKE2": shared/distro distroDisplayName). */
const protectionClause = (who: string, kubelet: NeedsKubelet | undefined): Record<NeedVerdict, string> => ({
  missing: 'not on this node',
  unprotected: kubelet?.maxAge ? `not pinned: kubelet's max-age GC deletes it ${maxAgeWhen(kubelet.maxAge)}` : 'not pinned: kubelet may delete it',
  losing: `loses its pin at the next ${who} start${kubelet?.maxAge ? `; then kubelet's max-age GC deletes it within ${maxAgeWhen(kubelet.maxAge).replace(/^within /, '')}` : ''}`,
  unverified: VERIFY_CLAUSE,
  protected: 'kept',
  reclaimable: 'pinned, and nothing at the site needs it',
  unneeded: 'not pinned',
});

/** The verdict's clause when kubelet must pull an image it did not pull itself to verify credentials. */
export const VERIFY_CLAUSE = 'kubelet will try to pull it to verify credentials; offline the pod will not start';

/** The kubelet settings the verdicts depend on (shared/gcPolicy, read from the node). */
export type NeedsKubelet = Pick<GcPolicy, 'maxAge' | 'credentialVerification'>;

/**
 * What to do when kubelet re-verifies imported images (data: the CLI and the app word it). Either
 * set the policy back to kubelet's default, which exempts images kubelet did not pull, or keep
 * NeverVerifyAllowlistedImages and list these repositories.
 */
export interface VerificationRemedy {
  policy: VerificationPolicy;
  /** Where the policy is set. */
  source: string;
  field: 'imagePullCredentialsVerificationPolicy';
  /** The value that exempts imported images. */
  exemptWith: 'NeverVerifyPreloadedImages';
  /** Repositories to add to preloadedImagesVerificationAllowlist instead (NeverVerifyAllowlistedImages). */
  allowlist: string[];
}

/**
 * The remedy in words, for every view: what to set where. Plain kubelet settings, no command.
 * `who` names the distro that runs the kubelet (its restart applies the change).
 */
export function verificationRemedyText(v: VerificationRemedy, who = 'k3s'): string {
  const list = v.allowlist.length ? ` (or keep NeverVerifyAllowlistedImages and add ${v.allowlist.join(', ')} to preloadedImagesVerificationAllowlist)` : '';
  return `kubelet re-verifies images it did not pull (${v.field}: ${v.policy}, ${v.source}): set it to ${v.exemptWith}${list}, then restart ${who}.`;
}

/** What, beside the references themselves, shows that an image came from an air-gap archive. */
export interface ProvenanceEvidence {
  /** References Holdfast pinned on the node (its audit log). */
  auditPinned?: ReadonlySet<string>;
  /** Target digests whose blob carries a `containerd.io/distribution.source.*` label (k3s PR #13221). */
  distributionSourced?: ReadonlySet<string>;
  /** The node's distro as the text names it ("k3s", "RKE2": shared/distro distroDisplayName); k3s when not given. */
  who?: string;
  /**
   * The node's kubelet settings (max-age GC, credential verification); absent: not read, and
   * kubelet's threshold GC alone is assumed.
   */
  kubelet?: NeedsKubelet;
}

/**
 * Every image on the node (grouped as `protection` groups them) with its verdict, and the needed
 * images the node lacks. `needs` null: Holdfast could not read any source (provenance decides).
 *
 * Needed all the same though no container runs it: an image of a Deployment scaled to zero, a
 * CronJob between runs, an old ReplicaSet kept for rollback, a pod not yet scheduled. Protection
 * is of the image as kubelet sees it.
 *
 * Where no source of needs answers (an agent node whose server is not reachable, no operator's
 * list), an image that came from an air-gap archive counts as needed: k3s's `name@sha256`
 * reference (k3s PR #13221), an archive in the images dir that brings it, a k3s pin on it now, or a
 * pin Holdfast made (its audit log). Nobody carried that image to the site for nothing.
 */
export function judgeNeeds(
  refs: readonly NeedsRef[],
  protection: ReadonlyMap<string, ImageProtection>,
  needs: NodeNeeds | null,
  opts: ProvenanceEvidence = {},
): NeedsJudgement {
  const ctx: JudgeContext = {
    auditPinned: opts.auditPinned ?? new Set<string>(),
    sourced: opts.distributionSourced ?? new Set<string>(),
    who: opts.who ?? 'k3s',
    clause: protectionClause(opts.who ?? 'k3s', opts.kubelet),
    cv: opts.kubelet?.credentialVerification,
    verifyRepos: new Set<string>(),
    known: needsKnown(needs),
    listLabel: needs?.sources.find((s) => s.kind === 'list')?.label ?? null,
    needs,
  };
  const { neededBy, missing } = neededImages(refs, needs);
  for (const m of missing) m.because = `${neededBecause(SOURCE_BASIS[m.source], m.workloads, ctx.listLabel)}; ${ctx.clause.missing}`;

  const byImage = new Map<string, ImageNeed>();
  let atRisk = missing.length;
  for (const [key, list] of refsByImage(refs)) {
    const need = judgeImage(key, list, protection.get(key), neededBy.get(key), ctx);
    if (need.atRisk) atRisk++;
    byImage.set(key, need);
  }
  missing.sort((a, b) => compareText(a.ref, b.ref));
  const cv = ctx.cv;
  const verification: VerificationRemedy | undefined =
    ctx.verifyRepos.size && cv?.policy
      ? { policy: cv.policy, source: cv.source, field: 'imagePullCredentialsVerificationPolicy', exemptWith: 'NeverVerifyPreloadedImages', allowlist: [...ctx.verifyRepos].sort(compareText) }
      : undefined;
  return { basis: ctx.known ? 'known' : 'provenance', byImage, missing, atRisk, ...(verification ? { verification } : {}) };
}

/** What judgeNeeds reads for every image, and the repositories kubelet re-verifies (filled as it goes). */
interface JudgeContext {
  auditPinned: ReadonlySet<string>;
  sourced: ReadonlySet<string>;
  who: string;
  clause: Record<NeedVerdict, string>;
  cv: NeedsKubelet['credentialVerification'];
  verifyRepos: Set<string>;
  known: boolean;
  listLabel: string | null;
  needs: NodeNeeds | null;
}

/** Why an image is needed (from the sources, or its provenance), as the verdict's reason. */
interface NeededBy {
  basis: NeedBasis;
  workloads: Workload[];
  refs: Set<string>;
}

/** Each needed reference → the images (protection keys) that satisfy it, and the needed references no image satisfies. */
function neededImages(refs: readonly NeedsRef[], needs: NodeNeeds | null): { neededBy: Map<string, NeededBy>; missing: MissingNeed[] } {
  const neededBy = new Map<string, NeededBy>();
  const missing: MissingNeed[] = [];
  for (const n of needs?.images ?? []) {
    const keys = new Set<string>();
    for (const r of refs) if (satisfies(n.ref, r)) keys.add(protectionKey(r));
    const basis = SOURCE_BASIS[n.source];
    if (keys.size === 0) {
      const prev = missing.find((m) => m.ref === n.ref);
      if (prev) {
        for (const w of n.workloads) if (!prev.workloads.some((x) => workloadName(x) === workloadName(w))) prev.workloads.push(w);
      } else {
        // (its `because` is written by judgeNeeds, once every workload that needs it is known)
        missing.push({ ref: n.ref, workloads: [...n.workloads], source: n.source, because: '', heldBy: [] });
      }
      continue;
    }
    for (const k of keys) {
      const got = neededBy.get(k);
      if (!got) neededBy.set(k, { basis, workloads: [...n.workloads], refs: new Set(n.source === 'sandbox' ? [] : [n.ref]) });
      else {
        if (n.source !== 'sandbox') got.refs.add(n.ref);
        // A workload outranks a list entry, which outranks the sandbox, as the reason to show.
        if (basis === 'workload' || (basis === 'list' && got.basis === 'sandbox')) got.basis = basis;
        for (const w of n.workloads) if (!got.workloads.some((x) => workloadName(x) === workloadName(w))) got.workloads.push(w);
      }
    }
  }
  return { neededBy, missing };
}

/** Whether an image is needed and why: a source says so, or (no source known) its provenance or its pin. */
function needBasis(list: readonly NeedsRef[], p: ImageProtection | undefined, need: NeededBy | undefined, ctx: JudgeContext): { basis: NeedBasis | null; because: string } {
  if (need) return { basis: need.basis, because: neededBecause(need.basis, need.workloads, ctx.listLabel) };
  if (ctx.known) return { basis: null, because: 'nothing at the site needs it' };
  const from = provenance(list, ctx.auditPinned, ctx.sourced, ctx.who);
  if (from) return { basis: 'provenance', because: from };
  // Without a source Holdfast cannot call a pin reclaimable: whoever pinned it may need it.
  if (p && (p.now || p.afterRestart)) return { basis: 'provenance', because: 'pinned on the node, and no source of needs says otherwise' };
  const noSource = ctx.needs?.noSource;
  return { basis: null, because: noSource ? `no source of needs (${noSource}), not from an air-gap archive` : 'not from an air-gap archive, and no source of needs' };
}

/** One image's verdict and its reason. */
function judgeImage(key: string, list: readonly NeedsRef[], p: ImageProtection | undefined, need: NeededBy | undefined, ctx: JudgeContext): ImageNeed {
  const { basis, because } = needBasis(list, p, need, ctx);
  const needed = basis !== null;
  let verdict = verdictOf(p, needed);
  // kubelet re-verifies an image it did not pull itself (every imported one; the sandbox image
  // is CRI's, not kubelet's): it pulls it first, which offline fails (KEP-2535).
  const verifying = needed && p !== undefined && basis !== 'sandbox' ? verifyingRepos(need ? [...need.refs] : list.map((r) => r.name), ctx.cv) : [];
  if (verifying.length) {
    for (const r of verifying) ctx.verifyRepos.add(r);
    if (verdict === 'protected') verdict = 'unverified';
  }
  // Pinned, yet unprotected: kubelet does not see the pin on this containerd (none before
  // 1.7.3; on 1.7.3–1.7.9 only if the reference CRI loaded first carries it).
  const ignored = verdict === 'unprotected' && list.some((r) => r.pin !== 'none');
  const clause = ctx.clause;
  return {
    key,
    verdict,
    atRisk: isAtRisk(verdict),
    needed,
    basis,
    workloads: need?.workloads ?? [],
    neededBecause: needed ? because : null,
    because: needed
      ? `${because}; ${ignored ? 'pinned, but kubelet does not see the pin on this containerd: it may delete it' : clause[verdict]}${verifying.length && verdict !== 'unverified' ? `; ${VERIFY_CLAUSE}` : ''}`
      : verdict === 'reclaimable'
        ? `${clause.reclaimable}`
        : because,
  };
}

/** The repositories (of these references) kubelet re-verifies before it uses an image it did not pull. */
function verifyingRepos(refs: readonly string[], cv: NeedsKubelet['credentialVerification']): string[] {
  if (!cv?.policy) return [];
  const out = new Set<string>();
  for (const r of refs) {
    if (isImageIdRecord(r)) continue;
    const repo = splitReference(r)?.repository ?? null;
    if (repo && verifiesPreloaded(cv, repo)) out.add(repo);
  }
  return [...out];
}

/** The references (tags first) of the images at risk, for a one-line summary. */
export function atRiskImages(j: NeedsJudgement): ImageNeed[] {
  return [...j.byImage.values()].filter((n) => n.atRisk);
}


/** A node's needs and what they mean there, beside its images (images report, fleet results). */
export interface NeedsReport {
  basis: NeedsJudgement['basis'];
  sources: NeedSource[];
  noSource?: string;
  /** A cluster answered, but none of its Nodes is this node (NodeNeeds.unmatched). */
  unmatched?: KubeNodeUnmatched;
  notes: string[];
  missing: MissingNeed[];
  /** Needed images at risk on the node, missing ones included. */
  atRisk: number;
  /** kubelet re-verifies the imported images the site needs: what to change (the views word it). */
  verification?: VerificationRemedy;
}

/**
 * The references with their image's verdict, and the node's report: what `images`, `inspect`,
 * the server and the app show. `holders` says where a missing image can be found (an archive in
 * the images dir, another node). Pure.
 */
export function applyNeeds<T extends NeedsRef>(
  refs: readonly T[],
  protection: ReadonlyMap<string, ImageProtection>,
  needs: NodeNeeds | null,
  opts: ProvenanceEvidence & { holders?: (ref: string) => string[] } = {},
): { refs: (T & { need: RefNeed })[]; report: NeedsReport } {
  const j = judgeNeeds(refs, protection, needs, opts);
  const out = refs.map((r) => {
    const { key: _key, ...need } = j.byImage.get(protectionKey(r))!;
    return { ...r, need };
  });
  const missing = opts.holders ? j.missing.map((m) => ({ ...m, heldBy: opts.holders!(m.ref) })) : j.missing;
  return {
    refs: out,
    report: {
      basis: j.basis,
      sources: needs?.sources ?? [],
      ...(needs?.noSource !== undefined ? { noSource: needs.noSource } : needs === null ? { noSource: 'Holdfast could not read what the site needs' } : {}),
      ...(needs?.unmatched ? { unmatched: needs.unmatched } : {}),
      notes: needs?.notes ?? [],
      missing,
      atRisk: j.atRisk,
      ...(j.verification ? { verification: j.verification } : {}),
    },
  };
}

/** A needed image at risk on a node, as `inspect --json` lists it under summary.atRisk. */
export interface AtRiskImage {
  /** The image's references (a missing one: the reference the site needs). */
  refs: string[];
  verdict: 'missing' | 'unprotected' | 'losing' | 'unverified';
  workloads: Workload[];
  because: string;
  /** Where a missing image can be found (an archive, another node). */
  heldBy?: string[];
  /**
   * Making its pins durable changes something: it is on the node and some reference is not
   * durable yet. false for a missing image, and for one whose durable pin kubelet ignores
   * (containerd before 1.7.3), or one kubelet re-verifies (`unverified`: a pin does not help):
   * advice to pin it again would go round in a loop.
   */
  pinnable: boolean;
}

/** The needed images at risk on a node: its images' verdicts, then what it lacks. Pure. */
export function atRiskOf(images: readonly (NeedsRef & { need?: RefNeed })[] | null | undefined, report: NeedsReport | null | undefined): AtRiskImage[] {
  const out: AtRiskImage[] = [];
  const byKey = new Map<string, AtRiskImage>();
  for (const r of images ?? []) {
    const n = r.need;
    if (!n?.atRisk) continue;
    const k = protectionKey(r);
    const got = byKey.get(k);
    if (got) got.refs.push(r.name);
    else {
      const item: AtRiskImage = { refs: [r.name], verdict: n.verdict as AtRiskImage['verdict'], workloads: n.workloads, because: n.because, pinnable: false };
      byKey.set(k, item);
      out.push(item);
    }
  }
  // CRI's own sha256:<id> record is never labelled by anyone: only named references count. A
  // pin does not help an image kubelet re-verifies (unverified): the remedy is kubelet's policy.
  for (const r of images ?? []) {
    if (r.need?.atRisk && r.need.verdict !== 'unverified' && r.pin !== 'durable' && !isImageIdRecord(r.name)) byKey.get(protectionKey(r))!.pinnable = true;
  }
  for (const m of report?.missing ?? []) out.push({ refs: [m.ref], verdict: 'missing', workloads: m.workloads, because: m.because, heldBy: m.heldBy, pinnable: false });
  return out;
}

/** "holdfast-sample:1.0 (at risk), report:1.0 (missing) and 2 more". */
export function atRiskText(list: readonly AtRiskImage[], max = 3): string {
  const shown = list.slice(0, max).map((a) => `${a.refs.find((r) => !isImageIdRecord(r) && !r.includes('@')) ?? a.refs[0]} (${NEED_VERDICT_TEXT[a.verdict]})`);
  return list.length > max ? `${shown.join(', ')} and ${list.length - max} more` : shown.join(', ');
}

/**
 * Who needs an image, in a few words (the short clause beside `because`): "needed by CronJob
 * default/nightly-report", "needed by Deployment default/web +2", "on the operator's list".
 */
export function neededByBrief(basis: NeedBasis | null, workloads: readonly Workload[]): string {
  if (workloads.length) return `needed by ${workloadName(workloads[0]!)}${workloads.length > 1 ? ` +${workloads.length - 1}` : ''}`;
  if (basis === 'list') return "on the operator's list";
  if (basis === 'sandbox') return "every pod's sandbox image";
  if (basis === 'provenance') return 'from an air-gap archive';
  return 'needed';
}

/**
 * A needed image at risk in one short clause, its verdict first: "missing: needed by CronJob
 * default/nightly-report". `images` and `report` are what atRiskOf read (for why it is needed). Pure.
 */
export function atRiskBrief(a: AtRiskImage, images: readonly (NeedsRef & { need?: RefNeed })[] | null | undefined, report: NeedsReport | null | undefined): string {
  const missing = a.verdict === 'missing' ? report?.missing.find((m) => m.ref === a.refs[0]) : undefined;
  const basis = missing ? SOURCE_BASIS[missing.source] : ((images ?? []).find((i) => a.refs.includes(i.name))?.need?.basis ?? null);
  return `${NEED_VERDICT_TEXT[a.verdict]}: ${neededByBrief(basis, a.workloads)}`;
}
