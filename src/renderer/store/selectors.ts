// Reading the store: a node's list, disk picture, status or live watcher, with the empty value
// when it was never loaded. Pure functions of the state (no actions), shared by components and
// by the slices, so they live apart from both.
import type { NodeStatus } from '../../shared/domain/connection';
import type { AppState, ArchivesState, AuditState, DiskState, ImagesState, LiveView, LostPinsState } from './types';

const EMPTY_IMAGES: ImagesState = { state: 'idle', items: [] };
const EMPTY_ARCHIVES: ArchivesState = { state: 'idle', items: [] };
const EMPTY_AUDIT: AuditState = { state: 'idle', items: [] };
const EMPTY_LOST: LostPinsState = { state: 'idle', items: [] };
const EMPTY_DISK: DiskState = { state: 'idle', full: false };

export function imagesOf(state: AppState, name: string): ImagesState {
  return state.images[name] ?? EMPTY_IMAGES;
}

export function archivesOf(state: AppState, name: string): ArchivesState {
  return state.archives[name] ?? EMPTY_ARCHIVES;
}

export function auditOf(state: AppState, name: string): AuditState {
  return state.audit[name] ?? EMPTY_AUDIT;
}

export function lostPinsOf(state: AppState, name: string): LostPinsState {
  return state.lostPins[name] ?? EMPTY_LOST;
}

export function diskOf(state: AppState, name: string): DiskState {
  return state.disk[name] ?? EMPTY_DISK;
}

export function statusOf(state: AppState, name: string): NodeStatus {
  return state.statuses[name] ?? { name, state: 'unknown' };
}

export function liveOf(state: AppState, name: string): LiveView | undefined {
  return state.live[name];
}
