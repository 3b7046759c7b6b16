/** Callbacks (webhooks) of the service: the receiver, the registrations, the trigger of cycles. */
export { Announcements, isTestCall, type CallbackHealth } from './announcements.js';
export {
  CALLBACK_STATE_FILE,
  checkCallbackCredentials,
  CREDENTIAL_CALLBACK_PASSWORD,
  loadCallbackCredentials,
  type CallbackCredentials,
} from './credentials.js';
export { REFUSALS, splitListen, startReceiver, type Receiver, type Refusal } from './receiver.js';
export { ensureRegistration, planRegistration, removeRegistrations, type Registered } from './registration.js';
export { restRegistry, type CallbackRegistry, type Registration } from './registry.js';
export { CallbackSetupError, CallbackTestError } from './errors.js';
export { CallbackTrigger } from './trigger.js';
export { callbackUrl, isOwnUrl } from './verify.js';
