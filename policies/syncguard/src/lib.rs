//! The all-in-one policy module (`syncguard.wasm`): waPC glue only. The checks and the way they
//! are combined are `syncguard::all_in_one`; which checks it holds is `syncguard::registry`.

syncguard::export_policy!(syncguard::all_in_one::AllInOne);
