//! The crd-schema-fields policy module: waPC glue only. The check is `syncguard::checks::crd_schema_fields`.

syncguard::export_policy!(syncguard::checks::crd_schema_fields::CrdSchemaFields);
