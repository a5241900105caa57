// POSIX shell quoting: the one rule for every command line Holdfast runs over SSH or shows a
// person to copy. Inside single quotes a POSIX shell (sh, dash, bash, ash, zsh) interprets
// nothing: not `$`, backquotes, `\`, `;`, globs or newlines. Only `'` cannot appear there; it is
// written `'\''` (close, escaped quote, reopen). Pure.

/** Characters no POSIX shell treats specially in an argument (never the command's first word). */
const SAFE_WORD = /^[A-Za-z0-9_@%+=:,./-]+$/;

/** One argument, always single-quoted: what runs over SSH, where even `FOO=bar` or `~` stay literal. */
export function shellQuoteArg(arg: string): string {
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** One argument as a person reads it: bare when every character is safe, else single-quoted. */
export function shellWord(arg: string): string {
  return SAFE_WORD.test(arg) ? arg : shellQuoteArg(arg);
}

/** A command line a person copies (ctr, zstd…): each argument through shellWord. */
export function shellLine(argv: readonly string[]): string {
  return argv.map(shellWord).join(' ');
}
