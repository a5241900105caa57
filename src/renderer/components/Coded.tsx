/** A core sentence that marks commands and names with backticks: those parts shown as code. */
export function Coded({ text }: { text: string }) {
  const parts = text.split(/`([^`]+)`/);
  return <>{parts.map((p, i) => (i % 2 ? <code key={i}>{p}</code> : p))}</>;
}
