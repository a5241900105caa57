import { displayRef, splitRef, splitRepo } from '../model/refs';

/**
 * A reference in one line of a narrow cell, elided in the middle: the start of the registry and
 * path stays (which registry it comes from), then the image's own name and its tag or digest
 * stay whole (what tells it from the next row). The path gives way first, cut at its end; the
 * name only when it alone is wider than the cell. The caller puts the full reference in a title.
 */
export function RefText({ name }: { name: string }) {
  const [repo, suffix] = splitRef(displayRef(name));
  const [path, base] = splitRepo(repo);
  return (
    <span className="ref-text ref-split">
      {path ? <span className="ref-path">{path}</span> : null}
      <span className="ref-base">{base}</span>
      {suffix ? <span className="ref-suffix">{suffix}</span> : null}
    </span>
  );
}
