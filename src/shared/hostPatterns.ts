// OpenSSH host patterns, one matcher for ssh_config `Host` lines and known_hosts host fields
// (ssh_config(5) PATTERNS, sshd(8) SSH_KNOWN_HOSTS FILE FORMAT): `*` any run of characters
// (also none), `?` exactly one, a leading `!` negates. A list matches when some positive pattern
// matches and no negated one does (a negated match vetoes the whole list). Host names are
// compared case-insensitively, as ssh lower-cases the name it looks up and the pattern.

/** `*` / `?` wildcard match, case-sensitive (also for file names: glob(3) in ssh_config Include). */
export function wildcardMatch(pattern: string, s: string): boolean {
  // Iterative wildcard match with single-star backtracking: linear-ish, no regex building.
  let p = 0;
  let i = 0;
  let starP = -1;
  let starI = 0;
  while (i < s.length) {
    const pc = pattern[p];
    if (pc === '*') {
      starP = p++;
      starI = i;
    } else if (pc !== undefined && (pc === '?' || pc === s[i])) {
      p++;
      i++;
    } else if (starP !== -1) {
      p = starP + 1;
      i = ++starI;
    } else {
      return false;
    }
  }
  while (pattern[p] === '*') p++;
  return p === pattern.length;
}

/** One host pattern (without `!`) against a host name, case-insensitively. */
export const hostPatternMatches = (pattern: string, host: string): boolean => wildcardMatch(pattern.toLowerCase(), host.toLowerCase());

/** A pattern list (empty entries ignored) against a host: no negated pattern may match, one positive must. */
export function hostPatternListMatches(patterns: readonly string[], host: string): boolean {
  let hit = false;
  for (const p of patterns) {
    if (p === '' || p === '!') continue;
    if (p.startsWith('!')) {
      if (hostPatternMatches(p.slice(1), host)) return false;
    } else if (hostPatternMatches(p, host)) hit = true;
  }
  return hit;
}
