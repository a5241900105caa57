// Application state (zustand, vanilla store so it is testable without React). All node
// access goes through the HoldfastApi passed in; every failure is kept as an ErrorInfo.
// One store made of slices, one per concern, in store/: nodes, images (and pins), archives (and
// audit log), disk (and prune), jobs, wizard (import wizard), live (the event stream), fleet (the
// fleet matrix) and credentials (the credential dialogs). They share store/context.ts and read
// each other only through get(); the state's shape is store/types.ts, the read helpers
// store/selectors.ts. This file combines them and is what the rest of the renderer imports.
import { createStore } from 'zustand/vanilla';
import type { ClientApi } from './api';
import { createArchivesSlice } from './store/archives';
import { createStoreContext } from './store/context';
import { createCredentialsSlice } from './store/credentials';
import { createDiskSlice } from './store/disk';
import { createFleetSlice } from './store/fleet';
import { createImagesSlice } from './store/images';
import { createJobsSlice } from './store/jobs';
import { createLiveSlice } from './store/live';
import { createNodesSlice } from './store/nodes';
import type { AppState, AppStore, StoreEnv } from './store/types';
import { createWizardSlice } from './store/wizard';
import { createWizardSignaturesSlice } from './store/wizardSignatures';

export type {
  AppState,
  AppStore,
  ArchivesState,
  AuditState,
  DiskState,
  DraftArchive,
  FleetRunState,
  ImagesState,
  ImportWizardState,
  ListState,
  LiveView,
  LostPinsState,
  PinAction,
  PinAlert,
  SignatureCheckState,
  SignatureFileKind,
  StoreEnv,
  View,
  WizardSignatures,
  WizardStep,
} from './store/types';
export { archivesOf, auditOf, diskOf, imagesOf, liveOf, lostPinsOf, statusOf } from './store/selectors';
export { IDLE_FLEET_RUN } from './store/fleet';
export { emptyWizard, importHoldings, wizardNodes } from './store/wizard';

export function createAppStore(api: ClientApi, env: StoreEnv = {}): AppStore {
  return createStore<AppState>()((set, get) => {
    const ctx = createStoreContext(api, env, set, get);
    return {
      ...createNodesSlice(ctx),
      ...createImagesSlice(ctx),
      ...createArchivesSlice(ctx),
      ...createDiskSlice(ctx),
      ...createLiveSlice(ctx),
      ...createWizardSlice(ctx),
      ...createWizardSignaturesSlice(ctx),
      ...createJobsSlice(ctx),
      ...createCredentialsSlice(ctx),
      ...createFleetSlice(ctx),
    };
  });
}
