/**
 * The two review protocols the apiserver speaks to webhooks, as pure functions from the
 * request body to the response body: ConversionReview (apiextensions.k8s.io/v1) and
 * AdmissionReview (admission.k8s.io/v1). A body that is not a review of the expected shape is
 * a `MalformedReviewError` (the server answers 400: the apiserver then applies the
 * webhook's failurePolicy, and a person reads the message in its log).
 */
import type { FieldError } from '../placement/field-error.js';
import {
  convertCanaryRelease,
  ConversionError,
  type ConversionOptions,
  type JsonObject,
} from './conversion.js';

/** A request body that is not the review it should be. */
export class MalformedReviewError extends Error {
  override readonly name = 'MalformedReviewError';
}

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function reviewRequest(body: unknown, apiVersion: string, kind: string): JsonObject {
  if (!isObject(body)) throw new MalformedReviewError(`body must be a ${kind} object`);
  if (body.apiVersion !== apiVersion || body.kind !== kind)
    throw new MalformedReviewError(
      `expected apiVersion ${apiVersion} kind ${kind}, got ${String(body.apiVersion)} ${String(body.kind)}`,
    );
  if (!isObject(body.request)) throw new MalformedReviewError('request is missing');
  if (typeof body.request.uid !== 'string' || body.request.uid === '')
    throw new MalformedReviewError('request.uid is missing');
  return body.request;
}

/**
 * Answers a ConversionReview: every object converted, or a Failure naming the object and the
 * field — never a partial list (the apiserver requires one converted object per input).
 */
export function handleConversionReview(body: unknown, opts?: ConversionOptions): JsonObject {
  const request = reviewRequest(body, 'apiextensions.k8s.io/v1', 'ConversionReview');
  const desired = request.desiredAPIVersion;
  if (typeof desired !== 'string') throw new MalformedReviewError('request.desiredAPIVersion is missing');
  if (!Array.isArray(request.objects)) throw new MalformedReviewError('request.objects is missing');
  const response = (extra: JsonObject) => ({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'ConversionReview',
    response: { uid: request.uid, ...extra },
  });
  const converted: JsonObject[] = [];
  for (const [i, obj] of request.objects.entries()) {
    if (!isObject(obj) || obj.kind !== 'CanaryRelease') {
      return response({
        convertedObjects: [],
        result: { status: 'Failure', message: `objects[${i}]: only CanaryRelease is converted here` },
      });
    }
    try {
      converted.push(convertCanaryRelease(obj, desired, opts));
    } catch (err) {
      const meta = isObject(obj.metadata) ? obj.metadata : {};
      const who = `CanaryRelease ${String(meta.namespace ?? '')}/${String(meta.name ?? '?')}`;
      const why = err instanceof ConversionError ? err.message : String(err);
      return response({
        convertedObjects: [],
        result: { status: 'Failure', message: `cannot convert ${who} to ${desired}: ${why}` },
      });
    }
  }
  return response({ convertedObjects: converted, result: { status: 'Success' } });
}

/** The parts of an AdmissionReview request a validator reads. */
export interface AdmissionRequest {
  uid: string;
  /** The kind and version of `object` (the version matters: v1alpha1 is checked in its own terms). */
  kind: { group: string; version: string; kind: string };
  operation: string;
  namespace?: string;
  object: JsonObject;
}

/** Reads an AdmissionReview's request; `MalformedReviewError` when it is not one. */
export function admissionRequest(body: unknown): AdmissionRequest {
  const request = reviewRequest(body, 'admission.k8s.io/v1', 'AdmissionReview');
  const kind = request.kind;
  if (!isObject(kind) || typeof kind.version !== 'string' || typeof kind.kind !== 'string')
    throw new MalformedReviewError('request.kind is missing');
  if (typeof request.operation !== 'string') throw new MalformedReviewError('request.operation is missing');
  if (!isObject(request.object) && request.operation !== 'DELETE')
    throw new MalformedReviewError('request.object is missing');
  return {
    uid: request.uid as string,
    kind: { group: String(kind.group ?? ''), version: kind.version, kind: kind.kind },
    operation: request.operation,
    namespace: typeof request.namespace === 'string' ? request.namespace : undefined,
    object: isObject(request.object) ? request.object : {},
  };
}

/**
 * The AdmissionReview response for `errors`: allowed when there are none; otherwise denied
 * with status 422 Invalid, every error in the message (kubectl prints only the message) and
 * each as a cause with its field, as the apiserver's own validation reports them.
 */
export function admissionResponse(uid: string, kind: string, name: string, errors: FieldError[]): JsonObject {
  const response: JsonObject =
    errors.length === 0
      ? { uid, allowed: true }
      : {
          uid,
          allowed: false,
          status: {
            code: 422,
            reason: 'Invalid',
            message: `${kind} "${name}" is invalid: ${errors.map((e) => e.message).join('; ')}`,
            details: {
              kind,
              name,
              causes: errors.map((e) => ({ type: 'FieldValueInvalid', field: e.field, message: e.detail })),
            },
          },
        };
  return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response };
}
