//! Every policy's `test_data/cases.yml`, for every check of the registry: each case's expected
//! verdict, and its exact answers (the policy's and the all-in-one's) compared byte for byte
//! with `test_data/answers.snap` (`make answers` records them again after a change meant to
//! alter them).

#[test]
fn every_check_answers_its_cases() {
    for entry in syncguard::registry::CHECKS {
        syncguard_testkit::cases::run_cases(entry);
    }
}
