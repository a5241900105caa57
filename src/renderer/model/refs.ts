// Image references shortened or split for display: the digest part cut to 12 hex digits (the full
// value goes in a title), and a reference split where a narrow cell may cut it.
import { repositoryOf } from '../../shared/imageReference';
import { visibleControls } from '../../shared/visibleControls';

/**
 * Shorten the digest part of a digest reference for display; the full value goes in a title.
 * A reference comes from a node: its control and bidi characters are shown as `\uXXXX`
 * (shared/visibleControls), so U+202E cannot turn `x.exe:1` around or a line feed split it.
 */
export function displayRef(ref: string): string {
  const name = visibleControls(ref);
  const at = name.lastIndexOf('@sha256:');
  if (at < 0) return name;
  return `${name.slice(0, at)}@sha256:${name.slice(at + 8, at + 8 + 12)}…`;
}

/**
 * A reference split for display in a narrow cell: the repository (which may be cut with an
 * ellipsis) and the tag or digest part (kept whole: it is what tells two versions apart).
 */
export function splitRef(name: string): [repo: string, suffix: string] {
  const repo = repositoryOf(name);
  return [repo, name.slice(repo.length)];
}

/**
 * A repository split where a narrow cell cuts it: the registry and path up to the last `/`
 * (cut first), then the image's own name (what a technician reads the row by).
 * `docker.io/library/nginx` → [`docker.io/library/`, `nginx`].
 */
export function splitRepo(repo: string): [path: string, base: string] {
  const slash = repo.lastIndexOf('/');
  return slash < 0 ? ['', repo] : [repo.slice(0, slash + 1), repo.slice(slash + 1)];
}
