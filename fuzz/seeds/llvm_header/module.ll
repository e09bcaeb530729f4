; ModuleID = 'LLVMDialectModule'
source_filename = "LLVMDialectModule"

declare ptr @malloc(i64)

define float @dot(ptr %0, ptr %1, i64 %2, i64 %3, i64 %4, ptr %5, ptr %6, i64 %7, i64 %8, i64 %9) {
  %11 = insertvalue { ptr, ptr, i64, [1 x i64], [1 x i64] } poison, ptr %5, 0
  %12 = insertvalue { ptr, ptr, i64, [1 x i64], [1 x i64] } %11, ptr %6, 1
  %13 = insertvalue { ptr, ptr, i64, [1 x i64], [1 x i64] } %12, i64 %7, 2
  %14 = insertvalue { ptr, ptr, i64, [1 x i64], [1 x i64] } %13, i64 %8, 3, 0
  %15 = insertvalue { ptr, ptr, i64, [1 x i64], [1 x i64] } %14, i64 %9, 4, 0
  %16 = insertvalue { ptr, ptr, i64, [1 x i64], [1 x i64] } poison, ptr %0, 0
  %17 = insertvalue { ptr, ptr, i64, [1 x i64], [1 x i64] } %16, ptr %1, 1
  %18 = insertvalue { ptr, ptr, i64, [1 x i64], [1 x i64] } %17, i64 %2, 2
  %19 = insertvalue { ptr, ptr, i64, [1 x i64], [1 x i64] } %18, i64 %3, 3, 0
  %20 = insertvalue { ptr, ptr, i64, [1 x i64], [1 x i64] } %19, i64 %4, 4, 0
  %21 = extractvalue { ptr, ptr, i64, [1 x i64], [1 x i64] } %20, 3
  %22 = alloca [1 x i64], i64 1, align 8
  store [1 x i64] %21, ptr %22, align 4
  %23 = getelementptr [1 x i64], ptr %22, i32 0, i64 0
  %24 = load i64, ptr %23, align 4
  br label %25

25:                                               ; preds = %29, %10
  %26 = phi i64 [ %38, %29 ], [ 0, %10 ]
  %27 = phi float [ %37, %29 ], [ 0.000000e+00, %10 ]
  %28 = icmp slt i64 %26, %24
  br i1 %28, label %29, label %39

29:                                               ; preds = %25
  %30 = extractvalue { ptr, ptr, i64, [1 x i64], [1 x i64] } %20, 1
  %31 = getelementptr inbounds nuw float, ptr %30, i64 %26
  %32 = load float, ptr %31, align 4
  %33 = extractvalue { ptr, ptr, i64, [1 x i64], [1 x i64] } %15, 1
  %34 = getelementptr inbounds nuw float, ptr %33, i64 %26
  %35 = load float, ptr %34, align 4
  %36 = fmul float %32, %35
  %37 = fadd float %27, %36
  %38 = add i64 %26, 1
  br label %25

39:                                               ; preds = %25
  ret float %27
}

define float @_mlir_ciface_dot(ptr %0, ptr %1) {
  %3 = load { ptr, ptr, i64, [1 x i64], [1 x i64] }, ptr %0, align 8
  %4 = extractvalue { ptr, ptr, i64, [1 x i64], [1 x i64] } %3, 0
  %5 = extractvalue { ptr, ptr, i64, [1 x i64], [1 x i64] } %3, 1
  %6 = extractvalue { ptr, ptr, i64, [1 x i64], [1 x i64] } %3, 2
  %7 = extractvalue { ptr, ptr, i64, [1 x i64], [1 x i64] } %3, 3, 0
  %8 = extractvalue { ptr, ptr, i64, [1 x i64], [1 x i64] } %3, 4, 0
  %9 = load { ptr, ptr, i64, [1 x i64], [1 x i64] }, ptr %1, align 8
  %10 = extractvalue { ptr, ptr, i64, [1 x i64], [1 x i64] } %9, 0
  %11 = extractvalue { ptr, ptr, i64, [1 x i64], [1 x i64] } %9, 1
  %12 = extractvalue { ptr, ptr, i64, [1 x i64], [1 x i64] } %9, 2
  %13 = extractvalue { ptr, ptr, i64, [1 x i64], [1 x i64] } %9, 3, 0
  %14 = extractvalue { ptr, ptr, i64, [1 x i64], [1 x i64] } %9, 4, 0
  %15 = call float @dot(ptr %4, ptr %5, i64 %6, i64 %7, i64 %8, ptr %10, ptr %11, i64 %12, i64 %13, i64 %14)
  ret float %15
}

define { ptr, ptr, i64, [1 x i64], [1 x i64] } @scale(ptr %0, ptr %1, i64 %2, i64 %3, i64 %4, float %5) {
  %7 = insertvalue { ptr, ptr, i64, [1 x i64], [1 x i64] } poison, ptr %0, 0
  %8 = insertvalue { ptr, ptr, i64, [1 x i64], [1 x i64] } %7, ptr %1, 1
  %9 = insertvalue { ptr, ptr, i64, [1 x i64], [1 x i64] } %8, i64 %2, 2
  %10 = insertvalue { ptr, ptr, i64, [1 x i64], [1 x i64] } %9, i64 %3, 3, 0
  %11 = insertvalue { ptr, ptr, i64, [1 x i64], [1 x i64] } %10, i64 %4, 4, 0
  %12 = extractvalue { ptr, ptr, i64, [1 x i64], [1 x i64] } %11, 3
  %13 = alloca [1 x i64], i64 1, align 8
  store [1 x i64] %12, ptr %13, align 4
  %14 = getelementptr [1 x i64], ptr %13, i32 0, i64 0
  %15 = load i64, ptr %14, align 4
  %16 = getelementptr float, ptr null, i64 %15
  %17 = ptrtoint ptr %16 to i64
  %18 = call ptr @malloc(i64 %17)
  %19 = insertvalue { ptr, ptr, i64, [1 x i64], [1 x i64] } poison, ptr %18, 0
  %20 = insertvalue { ptr, ptr, i64, [1 x i64], [1 x i64] } %19, ptr %18, 1
  %21 = insertvalue { ptr, ptr, i64, [1 x i64], [1 x i64] } %20, i64 0, 2
  %22 = insertvalue { ptr, ptr, i64, [1 x i64], [1 x i64] } %21, i64 %15, 3, 0
  %23 = insertvalue { ptr, ptr, i64, [1 x i64], [1 x i64] } %22, i64 1, 4, 0
  br label %24

24:                                               ; preds = %27, %6
  %25 = phi i64 [ %35, %27 ], [ 0, %6 ]
  %26 = icmp slt i64 %25, %15
  br i1 %26, label %27, label %36

27:                                               ; preds = %24
  %28 = extractvalue { ptr, ptr, i64, [1 x i64], [1 x i64] } %11, 1
  %29 = getelementptr inbounds nuw float, ptr %28, i64 %25
  %30 = load float, ptr %29, align 4
  %31 = fmul float %30, %5
  %32 = fadd float %31, 1.000000e+00
  %33 = extractvalue { ptr, ptr, i64, [1 x i64], [1 x i64] } %23, 1
  %34 = getelementptr inbounds nuw float, ptr %33, i64 %25
  store float %32, ptr %34, align 4
  %35 = add i64 %25, 1
  br label %24

36:                                               ; preds = %24
  ret { ptr, ptr, i64, [1 x i64], [1 x i64] } %23
}

define void @_mlir_ciface_scale(ptr %0, ptr %1, float %2) {
  %4 = load { ptr, ptr, i64, [1 x i64], [1 x i64] }, ptr %1, align 8
  %5 = extractvalue { ptr, ptr, i64, [1 x i64], [1 x i64] } %4, 0
  %6 = extractvalue { ptr, ptr, i64, [1 x i64], [1 x i64] } %4, 1
  %7 = extractvalue { ptr, ptr, i64, [1 x i64], [1 x i64] } %4, 2
  %8 = extractvalue { ptr, ptr, i64, [1 x i64], [1 x i64] } %4, 3, 0
  %9 = extractvalue { ptr, ptr, i64, [1 x i64], [1 x i64] } %4, 4, 0
  %10 = call { ptr, ptr, i64, [1 x i64], [1 x i64] } @scale(ptr %5, ptr %6, i64 %7, i64 %8, i64 %9, float %2)
  store { ptr, ptr, i64, [1 x i64], [1 x i64] } %10, ptr %0, align 8
  ret void
}

define double @axpy(double %0, double %1, i32 %2) {
  %4 = sitofp i32 %2 to double
  %5 = fmul double %0, %1
  %6 = fadd double %5, %4
  ret double %6
}

define double @_mlir_ciface_axpy(double %0, double %1, i32 %2) {
  %4 = call double @axpy(double %0, double %1, i32 %2)
  ret double %4
}

define i32 @main() {
  br label %1

1:                                                ; preds = %5, %0
  %2 = phi i64 [ %9, %5 ], [ 1, %0 ]
  %3 = phi i32 [ %8, %5 ], [ 0, %0 ]
  %4 = icmp slt i64 %2, 11
  br i1 %4, label %5, label %10

5:                                                ; preds = %1
  %6 = trunc i64 %2 to i32
  %7 = mul i32 %6, %6
  %8 = add i32 %3, %7
  %9 = add i64 %2, 1
  br label %1

10:                                               ; preds = %1
  ret i32 %3
}

define i32 @_mlir_ciface_main() {
  %1 = call i32 @main()
  ret i32 %1
}

!llvm.module.flags = !{!0}

!0 = !{i32 2, !"Debug Info Version", i32 3}
