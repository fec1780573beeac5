# golden.py writes the inputs and pandas' results that the frame tests
# compare against. Run with Debian's python3-pandas (1.5.3):
#   /usr/bin/python3 golden.py
import numpy as np
import pandas as pd

rng = np.random.default_rng(26)
n = 3000
df = pd.DataFrame({
    "row": np.arange(n),
    "id1": rng.integers(1, 11, n),
    "id2": rng.integers(1, 6, n).astype(float),
    "id4": pd.array(["id%d" % k for k in rng.integers(1, 8, n)], dtype="string"),
    "v1": rng.integers(-50, 50, n).astype(float),
    "v3": np.round(rng.normal(0, 10, n), 6),
})
df.loc[rng.random(n) < 0.05, "id2"] = np.nan
df.loc[rng.random(n) < 0.05, "id4"] = pd.NA
df.loc[rng.random(n) < 0.1, "v1"] = np.nan
df.loc[rng.random(n) < 0.1, "v3"] = np.nan
df.loc[df.id1 == 7, "v3"] = np.nan  # a group with no v3 at all
df.to_csv("input.csv", index=False, float_format="%.6f")

aggs = dict(
    v1_sum=("v1", "sum"), v3_mean=("v3", "mean"), v3_count=("v3", "count"), v3_min=("v3", "min"),
    v1_max=("v1", "max"), v3_var=("v3", "var"), v3_std=("v3", "std"), v3_first=("v3", "first"),
    v1_last=("v1", "last"), v1_nunique=("v1", "nunique"), v3_median=("v3", "median"),
    id4_min=("id4", "min"), id4_nunique=("id4", "nunique"),
)
df.groupby("id1").agg(**aggs).reset_index().to_csv("groupby_id1.csv", index=False, float_format="%.12g")
df.groupby(["id4", "id2"]).agg(v3_sum=("v3", "sum"), v1_count=("v1", "count"), v3_max=("v3", "max"), v1_median=("v1", "median")).reset_index().to_csv(
    "groupby_id4_id2.csv", index=False, float_format="%.12g")

df.sort_values(["id2", "v3"], ascending=[False, True], na_position="last", kind="stable")[["row"]].to_csv("sort_id2d_v3.csv", index=False)
df.sort_values(["id4", "v1"], ascending=[True, False], na_position="first", kind="stable")[["row"]].to_csv("sort_id4_v1d_nf.csv", index=False)

right = pd.DataFrame({"id1": np.array([1, 2, 2, 3, 5, 8, 8, 8, 11, 12]), "rrow": np.arange(10)})
for how in ["inner", "left", "outer"]:
    df[["row", "id1"]].merge(right, on="id1", how=how)[["id1", "row", "rrow"]].to_csv("join_%s.csv" % how, index=False, float_format="%.0f")
right2 = pd.DataFrame({"id1": [1, 1, 2, 3, 3, 4], "id4": ["id1", "id2", "id1", "id3", "id3", "id9"], "rrow": np.arange(6)})
dfk = df[df.id4.notna()][["row", "id1", "id4"]]
dfk.merge(right2, on=["id1", "id4"], how="inner")[["row", "rrow"]].to_csv("join2_inner.csv", index=False)

vc = df.id4.value_counts().rename_axis("id4").reset_index(name="count")
vc.to_csv("value_counts_id4.csv", index=False)
df.drop_duplicates(["id2", "id4"])[["row"]].to_csv("drop_duplicates_id2_id4.csv", index=False)
df[["id1", "v1", "v3"]].describe().to_csv("describe.csv", float_format="%.12g", index_label="stat")
s = pd.DataFrame({"row": df.row, "len": df.id4.str.len(), "has3": df.id4.str.contains("d3"),
                  "up": df.id4.str.upper(), "ends": df.id4.str.endswith("5")})
s.to_csv("strings.csv", index=False)
