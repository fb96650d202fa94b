import { FieldError } from '../placement/field-error.js';
import {
  admissionRequest,
  admissionResponse,
  handleConversionReview,
  MalformedReviewError,
} from './reviews.js';

const alpha = {
  apiVersion: 'sluice.dev/v1alpha1',
  kind: 'CanaryRelease',
  metadata: { name: 'pay', namespace: 'shop' },
  spec: {
    targetService: { name: 'pay', port: 80 },
    trafficSplit: { baseline: 90, canary: 10 },
    metrics: [{ name: 'success_rate', query: 'up', threshold: 0.99 }],
  },
};
const review = (request: object) => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'ConversionReview',
  request,
});

describe('ConversionReview', () => {
  it('GIVEN two objects WHEN converted to v1 THEN both come back in order with Success and the uid', () => {
    const out = handleConversionReview(
      review({
        uid: 'u',
        desiredAPIVersion: 'sluice.dev/v1',
        objects: [alpha, { ...alpha, metadata: { name: 'b' } }],
      }),
    ) as {
      response: {
        uid: string;
        convertedObjects: Array<{ apiVersion: string; metadata: { name: string } }>;
        result: object;
      };
    };
    expect(out.response.uid).toBe('u');
    expect(out.response.result).toEqual({ status: 'Success' });
    expect(out.response.convertedObjects.map((o) => [o.apiVersion, o.metadata.name])).toEqual([
      ['sluice.dev/v1', 'pay'],
      ['sluice.dev/v1', 'b'],
    ]);
  });

  it('GIVEN an object of another kind WHEN converted THEN the review fails and names its index', () => {
    const out = handleConversionReview(
      review({ uid: 'u', desiredAPIVersion: 'sluice.dev/v1', objects: [alpha, { kind: 'Delivery' }] }),
    );
    expect(out.response).toEqual({
      uid: 'u',
      convertedObjects: [],
      result: { status: 'Failure', message: 'objects[1]: only CanaryRelease is converted here' },
    });
  });

  it.each([
    [null, /body must be a ConversionReview object/],
    [
      { apiVersion: 'apiextensions.k8s.io/v1beta1', kind: 'ConversionReview' },
      /expected apiVersion apiextensions\.k8s\.io\/v1/,
    ],
    [review({ uid: 'u', objects: [] }), /desiredAPIVersion is missing/],
    [review({ uid: 'u', desiredAPIVersion: 'sluice.dev/v1' }), /objects is missing/],
  ])('GIVEN the malformed review %j THEN MalformedReviewError says what is missing', (body, message) => {
    expect(() => handleConversionReview(body)).toThrow(MalformedReviewError);
    expect(() => handleConversionReview(body)).toThrow(message);
  });
});

describe('AdmissionReview', () => {
  it('GIVEN errors WHEN answered THEN denied with 422, every message, and a cause per field', () => {
    const res = admissionResponse('u', 'CanaryRelease', 'pay', [
      new FieldError('spec.metrics[0].query', 'Invalid value: "x(": PromQL syntax error'),
      new FieldError('spec.trafficSplit', 'baseline + canary must be 100'),
    ]);
    expect(res).toEqual({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: {
        uid: 'u',
        allowed: false,
        status: {
          code: 422,
          reason: 'Invalid',
          message:
            'CanaryRelease "pay" is invalid: spec.metrics[0].query: Invalid value: "x(": PromQL syntax error; spec.trafficSplit: baseline + canary must be 100',
          details: {
            kind: 'CanaryRelease',
            name: 'pay',
            causes: [
              {
                type: 'FieldValueInvalid',
                field: 'spec.metrics[0].query',
                message: 'Invalid value: "x(": PromQL syntax error',
              },
              {
                type: 'FieldValueInvalid',
                field: 'spec.trafficSplit',
                message: 'baseline + canary must be 100',
              },
            ],
          },
        },
      },
    });
    expect(admissionResponse('u', 'Delivery', 'd', [])).toEqual({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: 'u', allowed: true },
    });
  });

  it('GIVEN a request without kind or object WHEN read THEN MalformedReviewError', () => {
    const base = { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' };
    expect(() =>
      admissionRequest({ ...base, request: { uid: 'u', operation: 'CREATE', object: {} } }),
    ).toThrow(/request\.kind is missing/);
    expect(() =>
      admissionRequest({
        ...base,
        request: { uid: 'u', kind: { version: 'v1', kind: 'X' }, operation: 'CREATE' },
      }),
    ).toThrow(/request\.object is missing/);
    expect(
      admissionRequest({
        ...base,
        request: {
          uid: 'u',
          kind: { group: 'sluice.dev', version: 'v1alpha1', kind: 'CanaryRelease' },
          operation: 'CREATE',
          namespace: 'shop',
          object: alpha,
        },
      }),
    ).toMatchObject({ uid: 'u', kind: { version: 'v1alpha1' }, namespace: 'shop', object: alpha });
  });
});
