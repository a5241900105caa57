// The import wizard's shell: header, stepper, and the current step (one file per step in this
// folder). The wizard's state (step, archives, nodes, options, jobs) lives in the store
// (store/wizard.ts), so it keeps its step while the user looks at a node.
import { useEffect, useRef } from 'react';
import { useApp } from '../../context';
import { UploadIcon } from '../icons';
import { ChooseStep } from './ChooseStep';
import { NodesStep } from './NodesStep';
import { ReviewStep } from './ReviewStep';
import { RunStep } from './RunStep';
import { Stepper } from './Stepper';
import { SummaryStep } from './SummaryStep';

export function ImportWizard() {
  const step = useApp((s) => s.wizard.step);
  const direct = useApp((s) => s.wizard.direct);
  const setWizard = useApp((s) => s.setWizard);
  const closeImport = useApp((s) => s.closeImport);
  // Move focus to the new step's heading so keyboard and screen-reader users follow along.
  const first = useRef(true);
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    document.getElementById('step-title')?.focus();
  }, [step]);

  return (
    <main className="detail wizard" aria-labelledby="wizard-title" data-testid="import-wizard" data-step={step}>
      <header className="detail-head wizard-head">
        <div className="detail-title">
          <UploadIcon className="detail-icon" />
          <div>
            <h1 id="wizard-title">
              Import archives
            </h1>
            <p className="muted small">
              {direct
                ? 'Send only the layers each node lacks straight into its containerd, pinned durably.'
                : 'Upload image archives, let k3s import them, make the pins durable, remove the archives safely.'}
            </p>
          </div>
        </div>
        <div className="detail-actions">
          <button type="button" className="btn" onClick={closeImport}>
            Close
          </button>
        </div>
      </header>
      <div className="detail-body wizard-body">
        <Stepper step={step} onGo={(s) => setWizard({ step: s })} />
        {step === 'choose' ? <ChooseStep onNext={() => setWizard({ step: 'review' })} /> : null}
        {step === 'review' ? <ReviewStep onBack={() => setWizard({ step: 'choose' })} onNext={() => setWizard({ step: 'nodes' })} /> : null}
        {step === 'nodes' ? <NodesStep onBack={() => setWizard({ step: 'review' })} /> : null}
        {step === 'run' ? <RunStep /> : null}
        {step === 'summary' ? <SummaryStep /> : null}
      </div>
    </main>
  );
}
