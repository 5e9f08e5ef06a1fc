// What a backend or the routing layer composes: desired-resource keys and
// their objects, in the order they were composed.

import type { JsonObject } from '#lib';

export type Composed = [key: string, resource: JsonObject][];
