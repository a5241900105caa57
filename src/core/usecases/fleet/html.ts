// The fleet report as ONE self-contained HTML file: inline CSS only (no script, no external
// resource), readable on a phone, printable. Summary first, details after.
//
// XSS-safe by construction: markup is built only with the `html` tag, which escapes every
// interpolated value unless it is itself the result of `html` (already-safe markup). Node names,
// references, labels, reasons and error messages all go through it; attributes are always quoted.
import type { ImageRef } from '../../../shared/domain/images';
import type { LostPin } from '../../../shared/domain/lostPins';
import type { ArchiveFile } from '../../../shared/archivesReport';
import { archiveVerdict } from '../../../shared/removalVerdict';
import { LOST_PIN_KIND_TEXT } from '../../../shared/lostPins';
import { atRiskOf, NEED_VERDICT_TEXT, workloadsText } from '../../../shared/needs';
import { pinCounts, protectionKey, refOutcome, type ImageProtection } from '../../../shared/protection';
import { formatBytes, shortDigest } from '../../../shared/format';
import { visibleControls } from '../../../shared/visibleControls';
import { fleetDistroName, imageNames, isLowDisk, losingImagesOf, nodeDistroName, protectionOf, warningsOf, DEFAULT_LOW_DISK } from './summary';
import type { GuardView } from '../../../shared/guardState';
import type { FleetNodeResult, FleetReport } from '../../../shared/fleet';
import { inParens, proseText, type RemedyWording } from '../../../shared/remedy';
import { signatureSentence } from '../../../shared/signatures';

export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"'`]/g, (c) => `&#${c.charCodeAt(0)};`);
}

type Part = SafeHtml | string | number | boolean | null | undefined | Part[];

function render(v: Part): string {
  if (v === null || v === undefined || v === false) return '';
  if (v instanceof SafeHtml) return v.value;
  if (Array.isArray(v)) return v.map(render).join('');
  // Text may come from a node: control and bidi characters shown as `\uXXXX` (shared/visibleControls).
  return escapeHtml(typeof v === 'string' ? visibleControls(v) : String(v));
}

export function html(strings: TemplateStringsArray, ...values: Part[]): SafeHtml {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]!) + strings[i + 1]!;
  return new SafeHtml(out);
}

const CSS = `
:root{--fg:#1b1f24;--muted:#5b6470;--line:#d8dde3;--bg:#fff;--soft:#f4f6f8;--bad:#b42318;--badbg:#fdecea;--warn:#8a5a00;--warnbg:#fff4db;--ok:#1a7f37;--okbg:#e7f6ec}
*{box-sizing:border-box}
body{margin:0 auto;max-width:1200px;padding:16px;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
h1{font-size:1.5em;margin:0 0 4px}h2{font-size:1.25em;margin:28px 0 8px;border-bottom:2px solid var(--line);padding-bottom:4px}
h3{font-size:1.05em;margin:20px 0 6px}.muted{color:var(--muted)}
.cards{display:flex;flex-wrap:wrap;gap:8px;margin:12px 0}
.card{flex:1 1 130px;border:1px solid var(--line);border-radius:8px;padding:8px 12px;background:var(--soft)}
.card b{display:block;font-size:1.6em}.card.bad{background:var(--badbg);border-color:var(--bad)}.card.warn{background:var(--warnbg);border-color:var(--warn)}
.scroll{overflow-x:auto;-webkit-overflow-scrolling:touch}
table{border-collapse:collapse;width:100%;margin:4px 0 12px;font-size:.92em}
th,td{text-align:left;vertical-align:top;padding:5px 8px;border-bottom:1px solid var(--line)}
th{background:var(--soft);font-weight:600;white-space:nowrap}
td{overflow-wrap:anywhere}td.ref{min-width:26ch}td.path{min-width:16ch}td.why{min-width:24ch}td.nowrap{white-space:nowrap}
td.ref,td.mono,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.92em}
.digest{text-decoration:underline dotted;cursor:help;white-space:nowrap}
.tag{display:inline-block;padding:0 6px;border-radius:10px;font-size:.85em;white-space:nowrap;border:1px solid var(--line)}
.tag.bad{color:var(--bad);background:var(--badbg);border-color:var(--bad)}.tag.warn{color:var(--warn);background:var(--warnbg);border-color:var(--warn)}
.tag.ok{color:var(--ok);background:var(--okbg);border-color:var(--ok)}
.sig.ok{color:var(--ok)}.sig.warn{color:var(--warn)}
ul.reasons{margin:0;padding-left:18px}
.warnbox{border:1px solid var(--warn);background:var(--warnbg);color:var(--warn);border-radius:6px;padding:6px 10px;margin:8px 0}
article.node{border:1px solid var(--line);border-radius:8px;padding:4px 14px 8px;margin:14px 0}
dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:8px 0}dl.kv dt{color:var(--muted)}dl.kv dd{margin:0}
nav.toc a{margin-right:10px;white-space:nowrap}
@media (max-width:640px){body{padding:10px;font-size:14px}th,td{padding:4px 5px}.card b{font-size:1.3em}dl.kv{grid-template-columns:1fr}dl.kv dd{margin-bottom:4px}}
@media print{body{max-width:none;padding:0;font-size:10pt}.scroll{overflow:visible}nav.toc{display:none}
article.node{break-before:page;border:none;padding:0}tr,.card{break-inside:avoid}thead{display:table-header-group}
a{color:inherit;text-decoration:none}@page{margin:12mm}}
`;

const DIGEST = /(sha256:[0-9a-f]{64})/;

/**
 * Text that may hold digests (references, paths, reasons): each 64-digit digest shortened to the
 * digits IMAGE ID shows and its last 4, `sha256:80d331785726…e551`, the whole digest in its
 * title, so that a cell keeps a line or two, not six lines of hex; a name wraps after a `/` (or
 * before `@sha256:`) before it wraps anywhere else.
 */
const withDigests = (text: string): SafeHtml =>
  html`${text.split(DIGEST).map((p, i) =>
    i % 2
      ? html`<span class="digest" title="${p}">${`sha256:${shortDigest(p)}…${p.slice(-4)}`}</span>`
      : p.split(/(?<=\/)|(?=@$)/).map((part, j) => (j ? html`<wbr>${part}` : part)),
  )}`;

/** The reference's pin; a distro pin named as the node's distro (`who`: k3s, RKE2). */
const pinTag = (i: ImageRef, who: string): SafeHtml =>
  i.lostPin ? html`${pinTagOf(i, who)} <span class="tag bad">durable pin lost</span>` : pinTagOf(i, who);

const pinTagOf = (i: ImageRef, who: string) =>
  i.pin === 'durable' ? html`<span class="tag ok">durable</span>` : i.pin === 'distro' ? html`<span class="tag warn">${who}</span>` : html`<span class="tag">none</span>`;

/** What Holdfast verified of the reference's signature at import, in shared/signatures' words. */
function signatureCell(r: ImageRef['signature']): SafeHtml {
  const tone = !r ? 'muted' : r.verified ? 'sig ok' : 'sig warn';
  return html`<span class="${tone}">${withDigests(signatureSentence(r))}</span>`;
}

/** A reference's fate, read against its image's (shared/protection): "loses pin" only when kubelet's view of the image does. */
function fateTag(i: ImageRef, image: ImageProtection | undefined): SafeHtml {
  const o = image ? refOutcome(i, image) : i.afterRestart;
  if (o === 'loses-pin') return html`<span class="tag bad">loses pin</span>`;
  if (o === 'pinned') return html`<span class="tag ok">pinned</span>`;
  if (o === 'own-pin-goes') return html`<span class="tag">unpinned</span> <span class="muted">(image kept)</span>`;
  return html`<span class="tag">unpinned</span>`;
}

const list = (nodes: string[]) => (nodes.length ? nodes.join(', ') : '—');

function nodeAnchor(i: number): string {
  return `node-${i + 1}`;
}

function imagesTable(images: ImageRef[], protection: Map<string, ImageProtection>, who: string): SafeHtml {
  if (images.length === 0) return html`<p class="muted">No images in the namespace.</p>`;
  return html`<div class="scroll"><table><thead><tr><th>Reference</th><th>Pin</th><th>After next ${who} start</th><th>Image ID</th><th>Size</th><th>Archive</th><th>Why</th><th>Signature</th></tr></thead><tbody>${images.map(
    (i) =>
      html`<tr><td class="ref">${withDigests(i.name)}</td><td>${pinTag(i, who)}</td><td>${fateTag(i, protection.get(protectionKey(i)))}</td><td class="mono nowrap">${shortDigest(i.imageId)}</td><td class="nowrap">${formatBytes(i.size)}</td><td class="mono path">${withDigests(i.archive ?? '—')}</td><td class="why">${withDigests(i.reason)}</td><td class="why">${signatureCell(i.signature)}</td></tr>`,
  )}</tbody></table></div>`;
}

/** The removal's verdict (shared/removalVerdict): "yes, but" in the warning's colour while a warning stands. */
function removalTag(a: ArchiveFile): SafeHtml {
  const v = archiveVerdict(a);
  return html`<span class="tag ${v.tone === 'safe' ? 'ok' : 'warn'}" data-tone="${v.tone}">${v.cell}</span>`;
}

function archivesTable(archives: ArchiveFile[], who: string, word: RemedyWording | undefined): SafeHtml {
  if (archives.length === 0) return html`<p class="muted">The images dir is empty.</p>`;
  return html`<div class="scroll"><table><thead><tr><th>Path</th><th>Kind</th><th>Size</th><th>Images</th><th>Imported</th><th>Safe to remove</th><th>Why</th></tr></thead><tbody>${archives.map(
    (a) =>
      html`<tr><td class="mono path">${withDigests(a.path)}${a.cachedByK3s ? html` <span class="tag warn">cached by ${who}</span>` : ''}</td><td class="nowrap">${a.kind}</td><td class="nowrap">${formatBytes(a.size)}</td><td class="ref">${withDigests(a.error ? `unreadable: ${a.error}` : a.images.join(', ') || '—')}</td><td class="nowrap">${a.kind === 'archive' ? (a.imported ? 'yes' : 'no') : '—'}</td><td>${a.kind === 'archive' ? removalTag(a) : '—'}</td><td class="why">${a.kind === 'archive' ? withDigests(proseText(a.reason, word && inParens(word))) : ''}</td></tr>`,
  )}</tbody></table></div>`;
}

/** The lost-pin sentences mark commands with backticks: set those in code (every part still escaped). */
const withCode = (text: string): SafeHtml => html`${text.split(/`([^`]+)`/).map((p, i) => (i % 2 ? html`<code class="mono">${p}</code>` : p))}`;

function lostPinsTable(lost: LostPin[], word: RemedyWording | undefined): SafeHtml {
  return html`<div class="scroll"><table><thead><tr><th>Node</th><th>Reference</th><th>What happened</th><th>Made durable</th><th>Likely causes</th><th>Remedy</th></tr></thead><tbody>${lost.map(
    (l) =>
      html`<tr><td>${l.node}</td><td class="ref">${withDigests(l.ref)}</td><td><span class="tag bad">${LOST_PIN_KIND_TEXT[l.kind]}</span> ${l.summary}</td><td>${l.pinnedAt}<br><span class="muted">by ${l.pinnedBy}</span></td><td><ul class="reasons">${l.causes.map((c) => html`<li>${withCode(c)}</li>`)}</ul></td><td>${withCode(proseText(l.remedy.text, word && inParens(word)))}${word && l.remedy.step ? html`<br><span class="mono">${word(l.remedy.step)}</span>` : ''}</td></tr>`,
  )}</tbody></table></div>`;
}

/** The node's guard in the rule's words (shared/guardState), a tag for its state, and what its last run changed or could not fix. */
function guardCell(g: GuardView | null | undefined): SafeHtml {
  if (!g) return html`unknown`;
  const tone = g.status === 'running' ? 'ok' : g.status === 'absent' ? '' : g.status === 'stale' || g.status === 'failing' ? 'bad' : 'warn';
  const fixed = (g.fixed ?? []).map((f) => (f.restored ? `${f.ref} (restored)` : f.ref));
  return html`<span class="tag ${tone}" data-guard="${g.status}">${g.status}</span> ${withDigests(g.words)}${g.pinSet?.digest ? html` <span class="muted">(pin set <span class="digest" title="${g.pinSet.digest}">${shortDigest(g.pinSet.digest)}</span>)</span>` : ''}${fixed.length ? html`<br>made durable: ${withDigests(fixed.join(', '))}` : ''}${g.missing?.length ? html`<br>missing: ${withDigests(g.missing.join(', '))}` : ''}`;
}

function nodeDetails(n: FleetNodeResult, i: number, report: FleetReport, word: RemedyWording | undefined): SafeHtml {
  const rule = report.summary.lowDiskRule ?? DEFAULT_LOW_DISK;
  if (!n.reachable) {
    return html`<article class="node" id="${nodeAnchor(i)}"><h3>${n.node} <span class="tag bad">unreachable</span></h3>
<p><b>${n.error?.code ?? 'ERROR'}</b>: ${n.error?.message ?? 'unknown error'}</p>${n.error?.hint ? html`<p class="muted">${n.error.hint}</p>` : ''}</article>`;
  }
  const v = n.versions;
  const images = n.images ?? [];
  const counts = pinCounts(images);
  const who = nodeDistroName(n);
  return html`<article class="node" id="${nodeAnchor(i)}"><h3>${n.node} <span class="tag ok">reachable</span></h3>
${warningsOf(n).map((w) => html`<p class="warnbox"><b>Warning:</b> ${w.message}</p>`)}
<dl class="kv"><dt>Distribution</dt><dd>${v ? (v.distroVersion ? `${v.distro} ${v.distroVersion}` : `${v.distro} (version unknown)`) : '—'}</dd>
<dt>containerd</dt><dd>${v ? `${v.containerdVersion} (${v.containerdRevision || 'revision unknown'})` : '—'}</dd>
<dt>Disk (images dir)</dt><dd>${n.disk ? html`${formatBytes(n.disk.freeBytes)} free${n.disk.totalBytes !== null ? ` of ${formatBytes(n.disk.totalBytes)}` : ''} at <span class="mono">${n.disk.path}</span> (${n.disk.via})${isLowDisk(n, rule) ? html` <span class="tag bad">low</span>` : ''}` : 'unknown'}</dd>
<dt>References</dt><dd>${images.length}: ${counts.durable} durable, ${counts.distro} ${who}-pinned, ${counts.none} unpinned</dd>
<dt>Guard</dt><dd>${guardCell(n.guard)}</dd>
<dt>Site needs</dt><dd>${n.needs ? (n.needs.basis === 'known' ? `from ${n.needs.sources.map((x) => x.label).join(', ')}` : `no source (${n.needs.noSource ?? 'none read'}): images from air-gap archives count as needed`) : 'unknown'}</dd></dl>
<h4>Images</h4>${imagesTable(images, protectionOf(n), who)}<h4>Images dir</h4>${archivesTable(n.archives ?? [], who, word)}</article>`;
}

/**
 * The report as one HTML page. `word`: how its remedies are worded (the CLI's command lines,
 * src/cli/remedyText); without it the page names none. Core words no command itself.
 */
export function fleetHtml(report: FleetReport, word?: RemedyWording): string {
  const s = report.summary;
  const losing = report.nodes.flatMap((n) => losingImagesOf(n).map((p) => ({ node: n.node, p })));
  const lost = report.nodes.flatMap((n) => n.lostPins ?? []);
  const atRisk = report.nodes.flatMap((n) => atRiskOf(n.images, n.needs).map((a) => ({ node: n.node, a })));
  const index = new Map(report.nodes.map((n, i) => [n.node, i]));
  // The fleet's distro in the totals: the one its nodes share, else "k3s/RKE2".
  const who = fleetDistroName(report.nodes);
  const body = html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light"><title>Holdfast fleet report ${report.generatedAt}</title><style>${new SafeHtml(CSS)}</style></head>
<body><header><h1>Holdfast fleet report</h1><p class="muted">Generated ${report.generatedAt} &middot; ${s.nodes} node${s.nodes === 1 ? '' : 's'} &middot; inspected in ${(s.durationMs / 1000).toFixed(1)} s</p></header>
<section id="summary"><h2>Summary</h2>
<div class="cards"><div class="card${s.unreachable ? ' bad' : ''}"><b>${s.reachable}/${s.nodes}</b>reachable</div>
<div class="card${atRisk.length ? ' bad' : ''}"><b>${atRisk.length}</b>needed images at risk</div>
<div class="card${s.losingPins ? ' bad' : ''}"><b>${s.losingPins}</b>images lose their pin at the next ${who} start</div>
<div class="card${lost.length ? ' bad' : ''}"><b>${lost.length}</b>durable pins lost behind Holdfast's back</div>
<div class="card${s.lowDisk ? ' warn' : ''}"><b>${s.lowDisk}</b>nodes low on disk</div>
<div class="card${s.drift ? ' warn' : ''}"><b>${s.drift}</b>images differ across nodes</div></div>
<h3>Nodes at risk</h3>
${s.atRisk.length === 0
  ? html`<p>No node at risk: every node answered, no durable pin is gone or lost at the next ${who} start, every node can pin, and no disk is low.</p>`
  : html`<div class="scroll"><table><thead><tr><th>Node</th><th>Why</th></tr></thead><tbody>${s.atRisk.map(
      (r) => html`<tr><td><a href="#${nodeAnchor(index.get(r.node) ?? 0)}">${r.node}</a></td><td class="why"><ul class="reasons">${r.reasons.map((x) => html`<li>${withDigests(x)}</li>`)}</ul></td></tr>`,
    )}</tbody></table></div>`}
<h3>Needed images at risk</h3>
${atRisk.length === 0
  ? html`<p>None: every image the sites need is on its nodes and stays protected after the next ${who} start.</p>`
  : html`<p class="muted">A pod that needs one of these may fail to start: the image is missing, not pinned, or loses its pin at the next ${who} start.</p><div class="scroll"><table><thead><tr><th>Node</th><th>Image</th><th>Verdict</th><th>Needed by</th><th>Why</th></tr></thead><tbody>${atRisk.map(
      ({ node, a }) => html`<tr><td>${node}</td><td class="ref">${withDigests(a.refs.join(', '))}</td><td><span class="tag bad">${NEED_VERDICT_TEXT[a.verdict]}</span></td><td>${a.workloads.length ? workloadsText(a.workloads, 3) : '—'}</td><td class="why">${withDigests(`${a.because}${a.heldBy?.length ? ` (copy: ${a.heldBy.join(', ')})` : ''}`)}</td></tr>`,
    )}</tbody></table></div>${word ? html`<p class="muted">Make them durable with <span class="mono">${word({ action: 'pin', node: 'NODE', needed: true })}</span>; bring a missing one back with <span class="mono">${word({ action: 'import', node: 'NODE', archive: 'ARCHIVE' })}</span>.</p>` : ''}`}
<h3>Pins lost behind Holdfast's back</h3>
${lost.length === 0
  ? html`<p>None: every durable pin Holdfast made on the reachable nodes is still in place.</p>`
  : html`<p class="muted">Pins Holdfast made durable (its audit log) that someone or something removed since.</p>${lostPinsTable(lost, word)}`}
<h3>Images that will lose their pin at the next ${who} start</h3>
${losing.length === 0
  ? html`<p>None.</p>`
  : html`<p class="muted">As kubelet sees them: per image id, by each node's containerd rule.</p><div class="scroll"><table><thead><tr><th>Node</th><th>Image</th><th>References</th><th>Why</th></tr></thead><tbody>${losing.map(
      ({ node, p }) => html`<tr><td>${node}</td><td class="ref">${withDigests(imageNames([p], 1))}</td><td class="ref">${withDigests(p.refs.join(', '))}</td><td class="why">${withDigests(p.reason)}</td></tr>`,
    )}</tbody></table></div>${word ? html`<p class="muted">Make them durable with <span class="mono">${word({ action: 'pin', node: 'NODE', allK3s: true })}</span> before removing any archive.</p>` : ''}`}
<h3>Drift across nodes</h3>
${report.drift.length === 0
  ? html`<p>The reachable nodes agree: every image is on all of them, pinned alike.</p>`
  : html`<p class="muted">Only images the reachable nodes disagree about. "Pinned" means pinned now (durable or by ${who}).</p><div class="scroll"><table><thead><tr><th>Image</th><th>Present on</th><th>Missing on</th><th>Pinned on</th><th>Unpinned on</th></tr></thead><tbody>${report.drift.map(
      (d) => html`<tr><td class="ref">${withDigests(d.name)}</td><td>${list(d.presentOn)}</td><td>${list(d.missingOn)}</td><td>${list(d.pinnedOn)}</td><td>${list(d.unpinnedOn)}</td></tr>`,
    )}</tbody></table></div>`}
</section>
<section id="details"><h2>Nodes</h2>
<nav class="toc">${report.nodes.map((n, i) => html`<a href="#${nodeAnchor(i)}">${n.node}</a> `)}</nav>
${report.nodes.map((n, i) => nodeDetails(n, i, report, word))}
</section></body></html>
`;
  return body.value;
}
