//! The ownership-markers policy module: waPC glue only. The check is `syncguard::checks::ownership_markers`.

syncguard::export_policy!(syncguard::checks::ownership_markers::OwnershipMarkers);
