// Local archive paths as the import wizard takes them: typed or pasted, one per line.

export function basename(p: string): string {
  const parts = p.split(/[\\/]/);
  return parts[parts.length - 1] || p;
}

/** Paths typed or pasted into the path field: one per line, trimmed, surrounding quotes dropped. */
export function parsePathInput(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((l) => l.trim().replace(/^(['"])(.*)\1$/, '$2').trim())
    .filter(Boolean);
}

/** A path the contract accepts as a local file: absolute (POSIX or Windows drive). */
export function isAbsoluteLocalPath(p: string): boolean {
  return (p.startsWith('/') || /^[A-Za-z]:[\\/]/.test(p)) && !p.includes('\0');
}
