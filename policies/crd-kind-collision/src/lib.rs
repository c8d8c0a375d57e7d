//! The crd-kind-collision policy module: waPC glue only. The check is `syncguard::checks::crd_kind_collision`.

syncguard::export_policy!(syncguard::checks::crd_kind_collision::CrdKindCollision);
