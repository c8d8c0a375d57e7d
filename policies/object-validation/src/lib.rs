//! The object-validation policy module: waPC glue only. The check is `syncguard::checks::object_validation`.

syncguard::export_policy!(syncguard::checks::object_validation::ObjectValidation);
