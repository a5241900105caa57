// One button of a segmented filter (a `.segmented` group): the images tab's pin filter and the
// fleet matrix's problem filter share it.
import type { ReactNode } from 'react';

/** Pressed (and styled active) when its value is the one shown. */
export function SegButton({ active, onClick, testId, children }: { active: boolean; onClick(): void; testId: string; children: ReactNode }) {
  return (
    <button type="button" aria-pressed={active} className={active ? 'seg active' : 'seg'} onClick={onClick} data-testid={testId}>
      {children}
    </button>
  );
}
