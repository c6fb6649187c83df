//! Trends: a host's stored runs read as series, one per row (benchmark, placement and
//! params), in time order; the change points in each (`changepoint`: E-divisive means with
//! a t-test).

pub mod changepoint;
