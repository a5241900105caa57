// The pin state from labels lives in shared/pinState (one rule for the core and the app).
export { pinState } from '../../shared/pinState';
