import { useEffect, useState } from 'react';
import { CheckIcon, CopyIcon } from './icons';

/** Copy through the async clipboard; fall back to a selected textarea (Electron denies permissions). */
async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const ta = document.createElement('textarea');
    ta.value = text;
    ta.setAttribute('readonly', '');
    ta.style.position = 'fixed';
    ta.style.opacity = '0';
    document.body.append(ta);
    ta.select();
    try {
      return document.execCommand('copy');
    } catch {
      return false;
    } finally {
      ta.remove();
    }
  }
}

export function CopyButton({ text, label }: { text: string; label: string }) {
  const [done, setDone] = useState<'copied' | 'failed' | null>(null);
  useEffect(() => {
    if (!done) return;
    const t = setTimeout(() => setDone(null), 1800);
    return () => clearTimeout(t);
  }, [done]);
  return (
    <button
      type="button"
      className="btn btn-icon btn-quiet"
      aria-label={label}
      title={done === 'failed' ? 'Could not copy: select the text instead' : label}
      onClick={() => void copyText(text).then((ok) => setDone(ok ? 'copied' : 'failed'))}
    >
      {done === 'copied' ? <CheckIcon /> : <CopyIcon />}
      <span className="copy-status" aria-live="polite">
        {done === 'copied' ? 'Copied' : done === 'failed' ? 'Copy failed' : ''}
      </span>
    </button>
  );
}
