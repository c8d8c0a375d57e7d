//! The crd-safe-upgrade policy module: waPC glue only. The check is `syncguard::checks::crd_safe_upgrade`.

syncguard::export_policy!(syncguard::checks::crd_safe_upgrade::CrdSafeUpgrade);
