//! The hook-job-safety policy module: waPC glue only. The check is `syncguard::checks::hook_job_safety`.

syncguard::export_policy!(syncguard::checks::hook_job_safety::HookJobSafety);
