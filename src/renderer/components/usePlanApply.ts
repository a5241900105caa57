// The state of a preview-then-apply dialog (pins, prune): plan on open and on retry, show the
// plan, apply it, then the result; an apply that fails goes back to the preview with its error.
// One hook, so both dialogs move through the same phases and drop a plan that answers after
// the dialog changed its question.
import { useEffect, useState, type DependencyList } from 'react';
import type { ErrorInfo } from '../../shared/domain/errors';
import type { Envelope } from '../../shared/channels';

export type PlanApplyPhase<P, R> =
  | { kind: 'planning' }
  | { kind: 'preview'; plan: P; error?: ErrorInfo }
  | { kind: 'applying'; plan: P }
  | { kind: 'done'; plan: P; result: R }
  | { kind: 'failed'; error: ErrorInfo };

/** `plan` runs again whenever `deps` change or retry() is called. */
export function usePlanApply<P, R>(plan: () => Promise<Envelope<P>>, deps: DependencyList) {
  const [phase, setPhase] = useState<PlanApplyPhase<P, R>>({ kind: 'planning' });
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    let live = true;
    setPhase({ kind: 'planning' });
    void plan().then((env) => {
      if (live) setPhase(env.ok ? { kind: 'preview', plan: env.result } : { kind: 'failed', error: env.error });
    });
    return () => {
      live = false;
    };
    // oxlint-disable-next-line react/exhaustive-deps -- deps name what plan depends on (plan is a fresh closure each render)
  }, [...deps, attempt]);

  return {
    phase,
    busy: phase.kind === 'applying',
    /** The plan on screen while the user decides (previewed, or being applied); null otherwise. */
    planShown: phase.kind === 'preview' || phase.kind === 'applying' ? phase.plan : null,
    /** Done or failed: only Close is left to press. */
    finished: phase.kind === 'done' || phase.kind === 'failed',
    retry: () => setAttempt((a) => a + 1),
    /** Applies `planned` with `run`: done with its result, or back to the preview with the error. */
    async apply(planned: P, run: () => Promise<Envelope<R>>): Promise<void> {
      setPhase({ kind: 'applying', plan: planned });
      const env = await run();
      setPhase(env.ok ? { kind: 'done', plan: planned, result: env.result } : { kind: 'preview', plan: planned, error: env.error });
    },
  };
}
