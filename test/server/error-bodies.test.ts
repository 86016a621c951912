/**
 * The error bodies of `test/helpers/errors.ts`, which the other suites compare answers with, are
 * PostHog's wire bodies to the letter (drf-exceptions-hog's `{type, code, detail, attr}`): they are
 * built with the server's factories, so this is where a factory drifting from PostHog shows.
 */
import { describe, expect, it } from 'vitest';
import {
  forbidden,
  INVALID_KEY,
  invalid,
  methodNotAllowed,
  missingScope,
  NO_PROJECT_ACCESS,
  NOT_AUTHENTICATED,
  NOT_FOUND,
  PROJECT_NOT_FOUND,
  projectNotAllowed,
  required,
} from '../helpers/errors.js';

describe('test/helpers/errors.ts', () => {
  it.each([
    ['NOT_FOUND', NOT_FOUND, { type: 'invalid_request', code: 'not_found', detail: 'Not found.', attr: null }],
    ['PROJECT_NOT_FOUND', PROJECT_NOT_FOUND, { type: 'invalid_request', code: 'not_found', detail: 'Project not found.', attr: null }],
    [
      'NOT_AUTHENTICATED',
      NOT_AUTHENTICATED,
      { type: 'authentication_error', code: 'not_authenticated', detail: 'Authentication credentials were not provided.', attr: null },
    ],
    [
      'INVALID_KEY',
      INVALID_KEY,
      {
        type: 'authentication_error',
        code: 'authentication_failed',
        detail: 'Personal API key found in request Authorization header is invalid.',
        attr: null,
      },
    ],
    [
      'NO_PROJECT_ACCESS',
      NO_PROJECT_ACCESS,
      { type: 'authentication_error', code: 'permission_denied', detail: "You don't have access to the project.", attr: null },
    ],
    ['forbidden(detail)', forbidden('No.'), { type: 'authentication_error', code: 'permission_denied', detail: 'No.', attr: null }],
    [
      "missingScope('plugin:read')",
      missingScope('plugin:read'),
      { type: 'authentication_error', code: 'permission_denied', detail: "API key missing required scope 'plugin:read'", attr: null },
    ],
    [
      'projectNotAllowed(1)',
      projectNotAllowed(1),
      {
        type: 'authentication_error',
        code: 'permission_denied',
        detail: 'API key does not have access to the requested project: ID 1.',
        attr: null,
      },
    ],
    ['invalid(detail)', invalid('Bad.'), { type: 'validation_error', code: 'invalid_input', detail: 'Bad.', attr: null }],
    [
      "invalid(detail, 'level', 'invalid_choice')",
      invalid('"15" is not a valid choice.', 'level', 'invalid_choice'),
      { type: 'validation_error', code: 'invalid_choice', detail: '"15" is not a valid choice.', attr: 'level' },
    ],
    [
      "methodNotAllowed('PUT')",
      methodNotAllowed('PUT'),
      { type: 'invalid_request', code: 'method_not_allowed', detail: 'Method "PUT" not allowed.', attr: null },
    ],
    [
      "required('plugin')",
      required('plugin'),
      { type: 'validation_error', code: 'required', detail: 'This field is required.', attr: 'plugin' },
    ],
  ])('%s is PostHog’s body', (_name, body, expected) => {
    expect(body).toStrictEqual(expected);
  });
});
