// What an operation writes to an image's labels, as the pin dialog and the log show it.

export interface LabelDiff {
  key: string;
  before?: string;
  after?: string;
  kind: 'added' | 'removed' | 'changed';
}

/** Only the labels that differ, sorted by key: what an operation actually writes. */
export function diffLabels(before: Record<string, string>, after: Record<string, string>): LabelDiff[] {
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  const out: LabelDiff[] = [];
  for (const key of keys) {
    const b = before[key];
    const a = after[key];
    if (b === a) continue;
    if (b === undefined) out.push({ key, after: a, kind: 'added' });
    else if (a === undefined) out.push({ key, before: b, kind: 'removed' });
    else out.push({ key, before: b, after: a, kind: 'changed' });
  }
  return out;
}
