import type { Metadata, NextCall } from '@grpc/grpc-js';
import { AmbientHeaders, GrpcStatus } from '../core/index.js';
import type { WireSetter } from '../outbound/stamp.js';

/** The call below ours: what `nextCall(options)` returns (grpc-js does not export its interface). */
export type WireCall = ReturnType<NextCall>;

/** Metadata key of the nested-retry marker, the same as the .NET library's (DESIGN §1). */
export const RETRYING_METADATA = AmbientHeaders.retrying;

/** Where the outbound protocol stamps an attempt's metadata: a value set, `undefined` removes the key. */
export function metadataSetter(metadata: Metadata): WireSetter {
  return (name, value) => (value === undefined ? metadata.remove(name) : metadata.set(name, value));
}

/** Lets go of a stream answer the client will not get: its call below is cancelled. */
export function cancelUnread(wire: WireCall): void {
  wire.cancelWithStatus(GrpcStatus.CANCELLED, 'answer not taken: the call went on without it');
}
