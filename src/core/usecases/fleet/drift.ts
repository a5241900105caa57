// Drift lives in shared/drift: one definition for the fleet report and the app's matrix.
export { computeDrift, DriftAccumulator, isPinnedNow } from '../../../shared/drift';
