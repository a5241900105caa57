// The methods of our containerd services (name, streaming, request and response message), read
// from proto/containerd/descriptors.json as plain JSON, with each message's static codecs
// (codecs.generated.ts). Why not protobufjs's reflection (Root.fromJSON): building it costs a
// cold CLI a few milliseconds at every start, and all the client needs from it is this table.
// The names in the file are protobuf's: relative to the enclosing package, or absolute with a
// leading dot; resolved here by protobuf's scoping rule (innermost scope first).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import codecs from './codecs.generated';
import { DESCRIPTORS_JSON } from './protoFiles';

/* oxlint-disable typescript/no-explicit-any -- generated codecs: untyped messages */
/** What the client does with a message: the static codecs' functions. */
export interface Codec {
  encode(message: any): { finish(): Uint8Array };
  decode(bytes: Uint8Array): any;
  fromObject(object: any): any;
  toObject(message: any, options?: { longs?: unknown; enums?: unknown; defaults?: boolean; oneofs?: boolean }): any;
}
/* oxlint-enable typescript/no-explicit-any */

export interface MethodInfo {
  name: string;
  requestStream: boolean;
  responseStream: boolean;
  request: Codec;
  response: Codec;
}

interface JsonNamespace {
  nested?: Record<string, JsonNamespace>;
  methods?: Record<string, { requestType: string; responseType: string; requestStream?: boolean; responseStream?: boolean }>;
}

/** The static codecs of the message with this full name (no leading dot), or undefined. */
export function codecNamed(fullName: string): Codec | undefined {
  let node: unknown = codecs;
  for (const part of fullName.split('.')) node = node && typeof node === 'object' ? (node as Record<string, unknown>)[part] : undefined;
  return typeof (node as Codec | undefined)?.decode === 'function' ? (node as Codec) : undefined;
}

/** Resolves a type name as written inside `scope` (the service's package) to its codecs. */
function resolveType(name: string, scope: string[]): Codec {
  const candidates = name.startsWith('.') ? [name.slice(1)] : scope.map((_, i) => [...scope.slice(0, scope.length - i), name].join('.')).concat(name);
  for (const c of candidates) {
    const codec = codecNamed(c);
    if (codec) return codec;
  }
  throw new Error(`message type ${name} (from ${scope.join('.')}) is not in codecs.generated.ts: run \`npm run proto:json\``);
}

/** Every service's methods in dir/descriptors.json, by the service's full name. */
export function loadMethodTables(dir: string): Map<string, MethodInfo[]> {
  const json = JSON.parse(readFileSync(path.join(dir, DESCRIPTORS_JSON), 'utf8')) as JsonNamespace;
  const tables = new Map<string, MethodInfo[]>();
  const walk = (ns: JsonNamespace, at: string[]) => {
    for (const [name, child] of Object.entries(ns.nested ?? {})) {
      if (child.methods) {
        tables.set(
          [...at, name].join('.'),
          Object.entries(child.methods).map(([m, d]) => ({
            name: m,
            requestStream: d.requestStream === true,
            responseStream: d.responseStream === true,
            request: resolveType(d.requestType, at),
            response: resolveType(d.responseType, at),
          })),
        );
      }
      walk(child, [...at, name]);
    }
  };
  walk(json, []);
  return tables;
}
