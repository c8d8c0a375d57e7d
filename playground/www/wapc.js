// The waPC host functions the policy modules import. The Kubewarden SDK that the checks share
// brings the waPC guest with it, and its exported entry point keeps these imports in the
// playground's module too; the page never calls that entry point (it calls the checks through
// wasm-bindgen), so each of these only reports that it was reached.
function unreachable(name) {
  return () => {
    throw new Error(`waPC host function ${name} called in the browser`);
  };
}

export const __console_log = unreachable("__console_log");
export const __host_call = unreachable("__host_call");
export const __host_response = unreachable("__host_response");
export const __host_response_len = unreachable("__host_response_len");
export const __host_error_len = unreachable("__host_error_len");
export const __host_error = unreachable("__host_error");
export const __guest_response = unreachable("__guest_response");
export const __guest_error = unreachable("__guest_error");
export const __guest_request = unreachable("__guest_request");
