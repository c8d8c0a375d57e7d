//! The sync-drift policy module: waPC glue only. The check is `syncguard::checks::sync_drift`.

syncguard::export_policy!(syncguard::checks::sync_drift::SyncDrift);
