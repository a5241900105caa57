// The wizard's five steps as a list at its top: where the user is, and (before the run) a way back
// to an earlier step. Its own file because the step order lives here, apart from any one step.
import type { WizardStep } from '../../store';
import { CheckIcon } from '../icons';

const STEPS: { id: WizardStep; label: string }[] = [
  { id: 'choose', label: 'Choose archives' },
  { id: 'review', label: 'Review contents' },
  { id: 'nodes', label: 'Choose nodes' },
  { id: 'run', label: 'Run' },
  { id: 'summary', label: 'Summary' },
];

export function Stepper({ step, onGo }: { step: WizardStep; onGo(step: WizardStep): void }) {
  const at = STEPS.findIndex((s) => s.id === step);
  const started = at >= 3;
  return (
    <ol className="stepper" aria-label="Import steps">
      {STEPS.map((s, i) => {
        const done = i < at;
        // Before the run the user may go back to any earlier step; after it, the past is fixed.
        const canGo = done && !started;
        const content = (
          <>
            <span className="stepper-num" aria-hidden="true">
              {done ? <CheckIcon /> : i + 1}
            </span>
            <span className="stepper-label">{s.label}</span>
          </>
        );
        return (
          <li key={s.id} className={`stepper-step${i === at ? ' current' : ''}${done ? ' done' : ''}`} aria-current={i === at ? 'step' : undefined}>
            {canGo ? (
              <button type="button" className="stepper-btn" onClick={() => onGo(s.id)}>
                {content}
                <span className="visually-hidden"> (go back)</span>
              </button>
            ) : (
              <span className="stepper-btn">{content}</span>
            )}
          </li>
        );
      })}
    </ol>
  );
}
