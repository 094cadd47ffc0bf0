# SPDX-License-Identifier: Apache-2.0
# Writes the small pool files the `fit` tests read:  cmake -DDIR=<dir> -P write_fit_data.cmake
cmake_minimum_required(VERSION 3.19)
file(MAKE_DIRECTORY "${DIR}")

# TSV: label, numeric, categorical, numeric (one missing), auxiliary.
file(WRITE "${DIR}/learn.tsv"
  "1\t0.5\tred\t3\tid1\n"
  "0\t1.5\tblue\t4\tid2\n"
  "1\t2.5\tred\tnan\tid3\n"
  "0\t3.5\tgreen\t6\tid4\n"
  "1\t4.5\tblue\t7\tid5\n"
  "0\t5.5\tred\t8\tid6\n")
file(WRITE "${DIR}/learn.cd" "0\tLabel\n1\tNum\tf_a\n2\tCateg\tcolour\n4\tAuxiliary\tid\n")

# CSV with a header, a weight and two baseline columns.
file(WRITE "${DIR}/header.csv"
  "y,a,b,w,base0,base1\n"
  "1,0.5,3,1.0,0.1,0.2\n"
  "0,1.5,4,2.0,0.3,0.4\n"
  "1,2.5,5,0.5,0.5,0.6\n")
file(WRITE "${DIR}/header.cd" "0\tLabel\n3\tWeight\n4\tBaseline\n5\tBaseline\n")

# Numeric only: label, three features (a deterministic pattern), 60 rows.
set(rows "")
foreach(i RANGE 59)
  math(EXPR a "(${i} * 37) % 100")
  math(EXPR b "(${i} * 11) % 17")
  math(EXPR c "(${i} * 7) % 5")
  if(a GREATER 50)
    set(y 1)
  else()
    set(y 0)
  endif()
  string(APPEND rows "${y}\t${a}\t${b}.5\t${c}\n")
endforeach()
file(WRITE "${DIR}/numeric.tsv" "${rows}")

# Bad inputs.
file(WRITE "${DIR}/short_row.tsv" "1\t0.5\t3\n0\t1.5\n")
file(WRITE "${DIR}/bad_type.cd" "0\tLabel\n1\tNumber\n")
file(WRITE "${DIR}/text.cd" "0\tTarget\n2\tText\tcolour\n4\tAuxiliary\n")
file(WRITE "${DIR}/nan_label.tsv" "nan\t0.5\n1\t1.5\n")
